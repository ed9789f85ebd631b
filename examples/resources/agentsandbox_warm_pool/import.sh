# A warm pool is imported by <namespace>/<name> (or <name> in namespace "default").
terraform import agentsandbox_warm_pool.python agent-sandboxes/python-sandbox-warmpool
