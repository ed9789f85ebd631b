data "agentsandbox_cluster" "this" {}

output "agent_sandbox_installed" {
  value = contains(data.agentsandbox_cluster.this.sandbox_api_versions, "agents.x-k8s.io/v1beta1")
}

output "gvisor_available" {
  value = data.agentsandbox_cluster.this.gvisor_runtime_class
}
