# A Python runtime warm pool as a platform team declares it on a cluster it
# already has: the controller, a hardened template, a warm pool, the
# isolation policy of its sandboxes and the sandbox router the SDKs reach
# them through, with its hardened defaults (every request needs a
# Kubernetes bearer token, checked with a TokenReview; only sandboxes are
# reachable from it; nobody reaches it over the pod network, since the SDKs
# port-forward).
provider "agentsandbox" {
  kubernetes {
    config_path    = var.kubeconfig
    config_context = var.kube_context
  }
}

resource "agentsandbox_controller" "this" {
  version          = var.agent_sandbox_version
  release_base_url = var.release_base_url
}

# The blueprint: gVisor, non-root, no capabilities, no service-account
# token, seccomp RuntimeDefault (the provider's defaults, not written here),
# limits, and the runtime's health check as readiness, so that a claim is
# Ready when the runtime answers.
resource "agentsandbox_sandbox_template" "python" {
  name      = "python"
  namespace = var.namespace

  pod_template = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [{
      name  = "python-runtime"
      image = var.runtime_image
      # The port the router forwards to (its sandbox_ports, the SDKs' default).
      ports = [{ name = "http", container_port = 8888 }]
      resources = {
        requests = { cpu = "250m", memory = "512Mi" }
        limits   = { cpu = "1", memory = "1Gi" }
      }
      readiness_probe = { http_get = { path = "/", port = "http" }, period_seconds = 2 }
    }]
  }

  # Isolated by agentsandbox_network_policy.python, which Terraform owns,
  # instead of the controller's managed policy (which allows egress to the
  # internet).
  network_policy_management = "Unmanaged"

  depends_on = [agentsandbox_controller.this]
}

# Ingress only from the router (app=sandbox-router in agent-sandbox-system)
# on 8888; no egress unless allow_internet (pip, git), and never the
# metadata server or private ranges.
resource "agentsandbox_network_policy" "python" {
  name           = "python-isolation"
  namespace      = var.namespace
  template       = agentsandbox_sandbox_template.python.name
  allow_internet = var.allow_internet
}

resource "agentsandbox_warm_pool" "python" {
  name      = "python"
  namespace = var.namespace
  template  = agentsandbox_sandbox_template.python.name
  replicas  = var.pool_size

  depends_on = [agentsandbox_network_policy.python]
}

# The router of the same release, with the resource's defaults, in
# agent-sandbox-system (the controller's namespace, where the sandboxes'
# policy expects it).
resource "agentsandbox_sandbox_router" "this" {
  version = var.agent_sandbox_version
  image   = var.router_image

  depends_on = [agentsandbox_controller.this]
}

# What is enforced, read back from the cluster once everything exists.
data "agentsandbox_isolation_report" "python" {
  namespace = var.namespace

  depends_on = [agentsandbox_warm_pool.python, agentsandbox_network_policy.python, agentsandbox_sandbox_router.this]
}

check "isolated" {
  assert {
    condition     = data.agentsandbox_isolation_report.python.summary.violations == 0
    error_message = "The isolation report finds violations: ${jsonencode(data.agentsandbox_isolation_report.python.violations)}"
  }
  assert {
    condition     = data.agentsandbox_isolation_report.python.router.requires_token
    error_message = "The sandbox router lets requests without a token through (authz_mode ${data.agentsandbox_isolation_report.python.router.authz_mode})."
  }
}
