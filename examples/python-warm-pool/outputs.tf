output "warm_pool" {
  description = "The warm pool and how many of its sandboxes are ready."
  value       = "${agentsandbox_warm_pool.python.id}: ${agentsandbox_warm_pool.python.ready_replicas}/${agentsandbox_warm_pool.python.replicas} ready"
}

output "router_url" {
  description = "The router's in-cluster URL (the Go SDK's APIURL, the Python SDK's api_url); the SDKs' default mode port-forwards to it instead."
  value       = agentsandbox_sandbox_router.this.url
}

output "router" {
  description = "The router's authorization as the isolation report reads it from the cluster."
  value = {
    authz_mode     = data.agentsandbox_isolation_report.python.router.authz_mode
    requires_token = data.agentsandbox_isolation_report.python.router.requires_token
  }
}

output "isolation" {
  description = "The isolation report's summary of the namespace's sandboxes."
  value       = data.agentsandbox_isolation_report.python.summary
}
