# A node pool is imported by its full resource name.
terraform import agentsandbox_gke_node_pool.sandbox projects/my-project/locations/us-central1/clusters/agents/nodePools/sandbox

# A pool managed by the Google provider so far: google_container_node_pool's ID
# works too (PROJECT/LOCATION/CLUSTER/POOL, or LOCATION/CLUSTER/POOL in the
# provider's gke.project). Remove it from the other configuration's state
# first, without destroying it:
#   terraform state rm google_container_node_pool.sandbox
terraform import agentsandbox_gke_node_pool.sandbox my-project/us-central1/agents/sandbox
