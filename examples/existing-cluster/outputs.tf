output "server_version" {
  value = data.agentsandbox_cluster.this.server_version
}

output "warm_pool" {
  description = "The warm pool and how many of its sandboxes are ready."
  value       = "${agentsandbox_warm_pool.python.id}: ${agentsandbox_warm_pool.python.ready_replicas}/${agentsandbox_warm_pool.python.replicas} ready"
}

output "warm_pool_selector" {
  value = agentsandbox_warm_pool.python.selector
}

output "isolation_policy" {
  value = agentsandbox_network_policy.isolate.rendered
}
