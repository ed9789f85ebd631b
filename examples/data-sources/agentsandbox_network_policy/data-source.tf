# The policy the agent-sandbox controller keeps for a template whose network
# policy management is Managed, in the same canonical JSON as
# agentsandbox_network_policy.rendered.
data "agentsandbox_network_policy" "managed" {
  name      = "python-analytics-template-network-policy"
  namespace = "agent-sandboxes"
}

output "controller_policy" {
  value = data.agentsandbox_network_policy.managed.rendered
}

# Warn on every plan if that policy stops keeping the link-local range (and with
# it the metadata server) out.
check "managed_policy_blocks_link_local" {
  assert {
    condition     = strcontains(data.agentsandbox_network_policy.managed.rendered, "\"169.254.0.0/16\"")
    error_message = "The controller's policy no longer excepts 169.254.0.0/16."
  }
}
