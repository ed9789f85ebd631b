# A long-lived agent session: one sandbox taken warm from the pool. The apply
# waits until it is ready and reports which sandbox it got and its pod IP.
resource "agentsandbox_sandbox_claim" "analyst" {
  name      = "analyst-session"
  namespace = "agent-sandboxes"
  warm_pool = agentsandbox_warm_pool.python.name

  # The session ends on its own: the sandbox is removed at this time and the
  # claim stays, not ready, with reason ClaimExpired (shutdown_policy Retain).
  shutdown_time = "2030-06-30T18:00:00Z"

  # Labels for the sandbox's pod; keys must be in the controller's allowed
  # label domains (by default sandbox.users.io).
  additional_pod_metadata = {
    labels = { "sandbox.users.io/team" = "analytics" }
  }
}

output "analyst_sandbox" {
  value = {
    sandbox = agentsandbox_sandbox_claim.analyst.sandbox_name
    pod_ips = agentsandbox_sandbox_claim.analyst.pod_ips
  }
}

# A session with its own environment. Variables can only be given to a new
# pod, so this claim is always cold-started from the pool's template (which must
# allow it: env_vars_injection_policy "Allowed" or "Overrides"), and changing
# env replaces the claim and its sandbox.
resource "agentsandbox_warm_pool" "notebook" {
  name      = "notebook"
  namespace = "agent-sandboxes"
  template  = agentsandbox_sandbox_template.notebook.name
  replicas  = 1
}

resource "agentsandbox_sandbox_claim" "notebook" {
  name      = "notebook-session"
  namespace = "agent-sandboxes"
  warm_pool = agentsandbox_warm_pool.notebook.name

  env = [
    { name = "SESSION_ID", value = "nb-42" },
    { name = "LOG_LEVEL", value = "debug", container_name = "jupyter" },
  ]
  shutdown_policy            = "Delete"
  ttl_seconds_after_finished = 300

  timeouts {
    create = "10m" # a cold start
  }
}
