output "warm_pools" {
  description = "Each team's warm pool, what its agents claim from."
  value = {
    data_science = "${module.data_science.namespace}/${module.data_science.warm_pool_name} (${module.data_science.ready_replicas} ready)"
    support_bots = "${module.support_bots.namespace}/${module.support_bots.warm_pool_name} (${module.support_bots.ready_replicas} ready)"
  }
}

output "data_science_node_pool" {
  value = module.data_science.node_pool_id
}

output "support_bots_claim" {
  description = "What a support-bots agent creates to get a sandbox."
  value       = module.support_bots.claim_manifest
}
