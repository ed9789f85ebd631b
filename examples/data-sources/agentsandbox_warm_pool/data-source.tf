# A pool's live status, for example one sized by an autoscaler.
data "agentsandbox_warm_pool" "python" {
  name      = "python-sandbox-warmpool"
  namespace = "agent-sandboxes"
}

output "warm_sandboxes" {
  value = "${data.agentsandbox_warm_pool.python.ready_replicas}/${data.agentsandbox_warm_pool.python.replicas} ready"
}

# Warn on every plan when the pool cannot serve claims warm.
check "warm_pool_ready" {
  assert {
    condition     = data.agentsandbox_warm_pool.python.ready
    error_message = "Only ${data.agentsandbox_warm_pool.python.ready_replicas} of ${data.agentsandbox_warm_pool.python.replicas} warm sandboxes are ready: claims will cold-start."
  }
}
