output "template_name" {
  description = "Name of the team's SandboxTemplate."
  value       = agentsandbox_sandbox_template.this.name
}

output "warm_pool_name" {
  description = "Name of the team's SandboxWarmPool: what the team's agents claim from (SandboxClaim spec.warmPoolRef.name)."
  value       = agentsandbox_warm_pool.this.name
}

output "warm_pool_selector" {
  description = "Label selector of the pool's unclaimed sandboxes and their pods."
  value       = agentsandbox_warm_pool.this.selector
}

output "ready_replicas" {
  description = "Ready sandboxes of the pool when last read."
  value       = agentsandbox_warm_pool.this.ready_replicas
}

output "network_policy_name" {
  description = "Name of the NetworkPolicy isolating the team's sandboxes."
  value       = agentsandbox_network_policy.this.name
}

output "network_policy" {
  description = "The enforced NetworkPolicy spec, as canonical JSON, for review."
  value       = agentsandbox_network_policy.this.rendered
}

output "namespace" {
  value = var.namespace
}

output "node_pool_id" {
  description = "Full resource name of the team's GKE node pool; null without one."
  value       = one(agentsandbox_gke_node_pool.this[*].id)
}

output "pod_selector" {
  description = "Labels every sandbox pod of the team carries, for monitoring and further policies."
  value       = { (local.team_label) = var.team }
}

output "claim_manifest" {
  description = "A SandboxClaim for the team's agents to create (e.g. with the agent-sandbox SDK or kubectl create -f -)."
  value = yamlencode({
    apiVersion = "extensions.agents.x-k8s.io/v1beta1"
    kind       = "SandboxClaim"
    metadata   = { generateName = "${var.team}-", namespace = var.namespace }
    spec       = { warmPoolRef = { name = agentsandbox_warm_pool.this.name } }
  })
}

output "isolation" {
  description = "The isolation report's counts for the team's sandboxes (data.agentsandbox_isolation_report): violations must be 0."
  value       = data.agentsandbox_isolation_report.this.summary
}
