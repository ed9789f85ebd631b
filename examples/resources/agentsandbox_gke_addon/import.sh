# The add-on is imported by its cluster's full resource name.
terraform import agentsandbox_gke_addon.this projects/my-project/locations/us-central1/clusters/agents
