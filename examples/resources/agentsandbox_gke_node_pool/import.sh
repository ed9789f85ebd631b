# A node pool is imported by its full resource name.
terraform import agentsandbox_gke_node_pool.sandbox projects/my-project/locations/us-central1/clusters/agents/nodePools/sandbox
