# Turn on GKE Pod snapshots (checkpoint and restore of running sandboxed
# pods). Snapshots also need Workload Identity, pods in GKE Sandbox (a
# gVisor node pool) and a Cloud Storage bucket configured as GKE's guides
# describe; this resource only turns the cluster feature on and off.
resource "agentsandbox_gke_pod_snapshots" "this" {
  project  = "my-project"
  location = "us-central1"
  cluster  = "agents"
}
