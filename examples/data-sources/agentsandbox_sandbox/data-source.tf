# A sandbox and its live status, whoever made it (this configuration, a warm
# pool, a claim, or a person).
data "agentsandbox_sandbox" "session" {
  name      = "agent-session-42"
  namespace = "agent-sandboxes"
}

output "sandbox" {
  value = {
    ready      = data.agentsandbox_sandbox.session.ready
    address    = data.agentsandbox_sandbox.session.service_fqdn
    pod_ips    = data.agentsandbox_sandbox.session.pod_ips
    conditions = [for c in data.agentsandbox_sandbox.session.conditions : "${c.type}=${c.status} (${c.reason})"]
  }
}
