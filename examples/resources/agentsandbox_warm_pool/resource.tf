# The walkthrough's python-sandbox-warmpool: five sandboxes of the
# python-analytics-template kept started, so that a claim gets one in well
# under a second. The apply waits until all five are ready; referencing the
# template's name makes Terraform create the template first.
resource "agentsandbox_warm_pool" "python" {
  name      = "python-sandbox-warmpool"
  namespace = "agent-sandboxes"
  template  = agentsandbox_sandbox_template.python_analytics.name
  replicas  = 5

  # Replace idle sandboxes as soon as the template changes, instead of when
  # they are next claimed.
  update_strategy = "Recreate"

  timeouts {
    create = "15m" # first image pulls and node scale-up
  }
}

# A pool sized by a HorizontalPodAutoscaler. The provider then neither sets
# nor compares spec.replicas: the autoscaler's scaling never shows in a plan.
# Switching an existing pool to this mode keeps its current size.
resource "agentsandbox_warm_pool" "autoscaled" {
  name                        = "python-autoscaled"
  namespace                   = "agent-sandboxes"
  template                    = agentsandbox_sandbox_template.python_analytics.name
  replicas_managed_externally = true
}

# The autoscaler targets the pool's scale subresource (here with the
# hashicorp/kubernetes provider, scaling on an external metric of pending
# claims; any HPA or KEDA ScaledObject works the same way).
resource "kubernetes_horizontal_pod_autoscaler_v2" "warm_pool" {
  metadata {
    name      = "python-autoscaled"
    namespace = "agent-sandboxes"
  }
  spec {
    min_replicas = 2
    max_replicas = 20
    scale_target_ref {
      api_version = "extensions.agents.x-k8s.io/v1beta1"
      kind        = "SandboxWarmPool"
      name        = agentsandbox_warm_pool.autoscaled.name
    }
    metric {
      type = "External"
      external {
        metric {
          name = "agent_sandbox_pending_claims"
        }
        target {
          type          = "AverageValue"
          average_value = "1"
        }
      }
    }
  }
}
