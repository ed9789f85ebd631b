# Let GKE run the Agent Sandbox controller and CRDs. Do not also install
# agentsandbox_controller (the open-source controller) in this cluster.
resource "agentsandbox_gke_addon" "this" {
  project  = "my-project"
  location = "us-central1"
  cluster  = "agents"
}
