# Pod snapshots are imported by their cluster's full resource name.
terraform import agentsandbox_gke_pod_snapshots.this projects/my-project/locations/us-central1/clusters/agents
