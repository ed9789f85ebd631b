# Agent sandboxes on a cluster you already have (any conformant Kubernetes
# with gVisor installed as the RuntimeClass "gvisor"), reached through a
# kubeconfig: the controller, a hardened template, a warm pool and the
# isolation policy.
provider "agentsandbox" {
  kubernetes {
    config_path    = var.kubeconfig
    config_context = var.kube_context
  }
}

# What the cluster offers, read at plan time.
data "agentsandbox_cluster" "this" {}

resource "agentsandbox_controller" "this" {
  version          = var.agent_sandbox_version
  release_base_url = var.release_base_url
}

resource "agentsandbox_sandbox_template" "python" {
  name      = "python-runtime"
  namespace = var.namespace

  pod_template = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports = [{ container_port = 8888 }]
      resources = {
        requests = { cpu = "250m", memory = "512Mi" }
        limits   = { cpu = "1", memory = "1Gi" }
      }
    }]
  }

  # Isolated by agentsandbox_network_policy.isolate instead of the
  # controller's managed policy (which allows egress to the internet).
  network_policy_management = "Unmanaged"

  lifecycle {
    precondition {
      condition     = data.agentsandbox_cluster.this.gvisor_runtime_class
      error_message = "The cluster has no RuntimeClass \"gvisor\", so the hardened template's sandboxes could not start. Install gVisor (runsc) on the nodes and create the RuntimeClass, or set pod_template.runtime_class_name to the sandboxing runtime the cluster has."
    }
  }

  depends_on = [agentsandbox_controller.this]
}

# Default deny for the template's sandboxes: ingress only from the sandbox
# router, no egress. Enforced only where the CNI implements NetworkPolicy.
resource "agentsandbox_network_policy" "isolate" {
  name      = "python-runtime-isolation"
  namespace = var.namespace
  template  = agentsandbox_sandbox_template.python.name
}

resource "agentsandbox_warm_pool" "python" {
  name      = "python-runtime"
  namespace = var.namespace
  template  = agentsandbox_sandbox_template.python.name
  replicas  = var.pool_size

  depends_on = [agentsandbox_network_policy.isolate]
}
