# The whole job on GKE in one apply: a gVisor node pool, the open-source
# agent-sandbox controller, a hardened template, five pre-warmed sandboxes,
# the isolation policy and one long-lived sandbox with a stable DNS name.
provider "agentsandbox" {
  gke {
    project      = var.project
    endpoint     = var.gke_endpoint
    access_token = var.gke_access_token
    # Only the local emulator of `make demo` speaks plain HTTP.
    allow_credentials_over_http = var.gke_allow_credentials_over_http
  }

  # Endpoint and CA come from the container API and the token from the same
  # Google credentials: no kubeconfig, no gcloud plugin.
  kubernetes {
    gke_cluster = "projects/${var.project}/locations/${var.location}/clusters/${var.cluster}"
  }
}

# Untrusted code runs on nodes of its own, under gVisor. GKE labels and
# taints them sandbox.gke.io/runtime=gvisor; pods with runtimeClassName
# gvisor (the template default) are scheduled there.
resource "agentsandbox_gke_node_pool" "sandbox" {
  location     = var.location
  cluster      = var.cluster
  name         = "agent-sandboxes"
  machine_type = "e2-standard-4"

  autoscaling = {
    min_node_count = 1
    max_node_count = 5
  }
}

# The controller and its CRDs, from the release bundle (or a mirror of it).
resource "agentsandbox_controller" "this" {
  version          = var.agent_sandbox_version
  release_base_url = var.release_base_url
}

# The sandbox pod, shared by the template and the long-lived sandbox. Only
# what differs from the hardened defaults is written: gVisor, non-root, no
# service account token, all capabilities dropped and RuntimeDefault seccomp
# are filled in, and the plan shows each of them.
locals {
  sandbox_pod = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports = [{ container_port = 8888 }]
      resources = {
        limits = { cpu = "1", memory = "1Gi" }
      }
    }]
  }
}

resource "agentsandbox_sandbox_template" "python" {
  name         = "python-runtime"
  namespace    = var.namespace
  pod_template = local.sandbox_pod

  # The isolation policy below replaces the controller's managed one, which
  # would allow egress to the internet.
  network_policy_management = "Unmanaged"

  depends_on = [agentsandbox_controller.this]
}

# Default deny for every execution sandbox of the namespace (pool members
# and the long-lived one): ingress only from the sandbox router on 8888, no
# egress at all, so neither DNS, the internet nor the metadata server.
resource "agentsandbox_network_policy" "isolate" {
  name      = "isolate-execution-sandboxes"
  namespace = var.namespace

  pod_selector = {
    match_labels = { "app.kubernetes.io/component" = "execution-sandbox" }
  }
}

# Five sandboxes started ahead of demand, so a claim gets one in well under
# a second; the apply waits until all five are ready.
resource "agentsandbox_warm_pool" "python" {
  name      = "python-runtime"
  namespace = var.namespace
  template  = agentsandbox_sandbox_template.python.name
  replicas  = 5

  depends_on = [agentsandbox_gke_node_pool.sandbox, agentsandbox_network_policy.isolate]
}

# A long-lived, stateful sandbox (an agent's workspace) with a stable DNS
# name from its headless Service.
resource "agentsandbox_sandbox" "workspace" {
  name         = "agent-workspace"
  namespace    = var.namespace
  pod_template = local.sandbox_pod
  service      = true

  depends_on = [agentsandbox_controller.this, agentsandbox_gke_node_pool.sandbox, agentsandbox_network_policy.isolate]
}

# Every plan proves the isolation as it runs: the RuntimeClass each pod
# really got, no token mounted, the hardened process settings, and no
# route to the metadata server, the Kubernetes API or a neighbour through
# the NetworkPolicies that select it. The report is read at plan, and after
# an apply that changes what it reports on (depends_on); a failed check is
# a warning, never a blocked apply.
data "agentsandbox_isolation_report" "sandboxes" {
  namespace = var.namespace
  selector  = "app.kubernetes.io/component=execution-sandbox"

  depends_on = [agentsandbox_warm_pool.python, agentsandbox_sandbox.workspace]
}

check "sandboxes_isolated" {
  assert {
    condition = data.agentsandbox_isolation_report.sandboxes.summary.violations == 0
    error_message = join("\n", [
      for v in data.agentsandbox_isolation_report.sandboxes.violations :
      "${v.sandbox}: ${v.title} (${v.attribute}): ${v.message}"
    ])
  }
}
