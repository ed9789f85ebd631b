output "node_pool" {
  description = "The gVisor node pool."
  value       = agentsandbox_gke_node_pool.sandbox.id
}

output "controller" {
  description = "Where the controller runs, and which release."
  value       = agentsandbox_controller.this.id
}

output "template" {
  value = agentsandbox_sandbox_template.python.id
}

output "warm_pool" {
  description = "The warm pool and how many of its sandboxes are ready."
  value       = "${agentsandbox_warm_pool.python.id}: ${agentsandbox_warm_pool.python.ready_replicas}/${agentsandbox_warm_pool.python.replicas} ready"
}

output "warm_pool_selector" {
  description = "Label selector of the pool's unclaimed sandboxes and their pods."
  value       = agentsandbox_warm_pool.python.selector
}

output "workspace_fqdn" {
  description = "Stable DNS name of the long-lived sandbox."
  value       = agentsandbox_sandbox.workspace.service_fqdn
}

output "isolation_policy" {
  description = "The NetworkPolicy spec enforced on the template's sandboxes."
  value       = agentsandbox_network_policy.isolate.rendered
}

output "isolation" {
  description = "The isolation report's counts for the execution sandboxes as they run: violations is 0 when each is isolated."
  value       = data.agentsandbox_isolation_report.sandboxes.summary
}
