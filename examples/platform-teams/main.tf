# A platform team's root configuration: the controller once per cluster,
# then the agent-sandbox-platform module once per team. Teams may share a
# namespace: every name starts with the team's.
provider "agentsandbox" {
  gke {
    project      = var.project
    endpoint     = var.gke_endpoint
    access_token = var.gke_access_token
    # Only the local emulator of `make demo` speaks plain HTTP.
    allow_credentials_over_http = var.gke_allow_credentials_over_http
  }
  kubernetes {
    gke_cluster = "projects/${var.project}/locations/${var.location}/clusters/${var.cluster}"
  }
}

resource "agentsandbox_controller" "this" {
  version          = var.agent_sandbox_version
  release_base_url = var.release_base_url
}

# Runs LLM-generated analysis code: its own gVisor nodes, egress only to the
# internal package mirror.
module "data_science" {
  source = "../modules/agent-sandbox-platform"

  team      = "data-science"
  namespace = var.data_science_namespace
  image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
  pool_size = 3
  resources = { cpu = "2", memory = "4Gi" }

  allow_dns         = true
  egress_allow_list = [{ cidr = "10.20.0.0/16", ports = [443] }]

  node_pool = {
    location     = var.location
    cluster      = var.cluster
    machine_type = "e2-standard-8"
    max_nodes    = 10
  }

  depends_on = [agentsandbox_controller.this]
}

# Runs customer-support tool calls: the shared gVisor nodes, no egress.
module "support_bots" {
  source = "../modules/agent-sandbox-platform"

  team      = "support-bots"
  namespace = var.support_bots_namespace
  image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
  pool_size = 2
  env       = { LOG_LEVEL = "info" }

  depends_on = [agentsandbox_controller.this]
}
