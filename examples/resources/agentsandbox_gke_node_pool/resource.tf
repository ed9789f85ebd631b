# A gVisor node pool for untrusted, LLM-generated code. Everything security
# relevant is on by default (GKE metadata server, Shielded VMs, auto-repair,
# auto-upgrade); GKE adds the sandbox.gke.io/runtime=gvisor label and taint
# itself, and pods with runtimeClassName: gvisor land here.
resource "agentsandbox_gke_node_pool" "sandbox" {
  project  = "my-project"
  location = "us-central1"
  cluster  = "agents"
  name     = "sandbox"

  machine_type    = "e2-standard-8"
  service_account = "sandbox-nodes@my-project.iam.gserviceaccount.com"

  autoscaling = {
    min_node_count = 1
    max_node_count = 10
  }

  labels = {
    "workload" = "agent-sandboxes"
  }

  # An extra taint reserving the pool for one team's sandboxes (their pod
  # template must tolerate it). GKE's own gVisor taint is added anyway.
  taints = [{
    key    = "dedicated"
    value  = "agent-sandboxes"
    effect = "NO_SCHEDULE"
  }]

  timeouts {
    create = "45m"
  }
}
