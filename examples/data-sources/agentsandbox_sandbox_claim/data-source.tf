# A claim made by another client (the sandbox router, an SDK): which sandbox
# it holds and where, or the controller's reason why it has none.
data "agentsandbox_sandbox_claim" "session" {
  name      = "analyst-session"
  namespace = "agent-sandboxes"
}

output "session" {
  value = {
    ready   = data.agentsandbox_sandbox_claim.session.ready
    sandbox = data.agentsandbox_sandbox_claim.session.sandbox_name
    pod_ips = data.agentsandbox_sandbox_claim.session.pod_ips
    reason  = data.agentsandbox_sandbox_claim.session.ready_reason
    message = data.agentsandbox_sandbox_claim.session.ready_message
  }
}
