# A router is imported by <namespace>/<version>. The import reads its
# configuration from the live Deployment, NetworkPolicy and
# PodDisruptionBudget (a router applied from upstream's files as they are
# reads as authz_mode = "allow-all" and network_policy = false, which the
# next plan shows and then hardens); the first apply adopts the objects
# and records the inventory.
terraform import agentsandbox_sandbox_router.this agent-sandbox-system/v1.0.3
