data "agentsandbox_gke_cluster" "agents" {
  project  = "my-project"
  location = "us-central1"
  name     = "agents"
}

# Which pools run gVisor, and whether GKE already runs the Agent Sandbox controller.
output "gvisor_pools" {
  value = [for p in data.agentsandbox_gke_cluster.agents.node_pools : p.name if p.sandbox_type == "GVISOR"]
}

output "managed_agent_sandbox" {
  value = data.agentsandbox_gke_cluster.agents.agent_sandbox_enabled
}
