# A template as the cluster has it, e.g. one the GKE add-on or another team
# manages: check on every plan that it still runs sandboxes under gVisor.
data "agentsandbox_sandbox_template" "python" {
  name      = "python-analytics-template"
  namespace = "agent-sandboxes"
}

check "template_uses_gvisor" {
  assert {
    condition     = data.agentsandbox_sandbox_template.python.pod_template.runtime_class_name == "gvisor"
    error_message = "python-analytics-template no longer runs its sandboxes under gVisor."
  }
}

output "template_network_policy" {
  value = data.agentsandbox_sandbox_template.python.network_policy_name
}
