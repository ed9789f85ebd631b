# Reach a GKE cluster with Google credentials only: the endpoint and CA come
# from the container API, the token from Application Default Credentials.
provider "agentsandbox" {
  gke {
    project = "my-project"
  }
  kubernetes {
    gke_cluster = "projects/my-project/locations/us-central1/clusters/agents"
  }
}
