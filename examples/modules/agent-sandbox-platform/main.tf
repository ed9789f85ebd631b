# One team's sandbox platform: a hardened template, a warm pool, the
# isolation policy and optionally a dedicated GKE gVisor node pool. The
# agent-sandbox controller is installed once per cluster, outside this
# module (agentsandbox_controller or GKE's add-on).

locals {
  team_label = "agentsandbox.dev/team"
  dedicated  = var.node_pool != null && try(var.node_pool.dedicated, false)

  pod_labels = merge(var.labels, {
    (local.team_label)            = var.team
    "app.kubernetes.io/component" = "execution-sandbox"
  })
}

resource "agentsandbox_gke_node_pool" "this" {
  count = var.node_pool == null ? 0 : 1

  project      = var.node_pool.project
  location     = var.node_pool.location
  cluster      = var.node_pool.cluster
  name         = "${var.team}-sandboxes"
  machine_type = var.node_pool.machine_type
  spot         = var.node_pool.spot

  autoscaling = {
    min_node_count = var.node_pool.min_nodes
    max_node_count = var.node_pool.max_nodes
  }

  labels = { (local.team_label) = var.team }
  taints = local.dedicated ? [{ key = local.team_label, value = var.team, effect = "NO_SCHEDULE" }] : null
}

resource "agentsandbox_sandbox_template" "this" {
  name      = "${var.team}-sandbox"
  namespace = var.namespace
  labels    = { (local.team_label) = var.team }

  pod_template = {
    labels = local.pod_labels
    containers = [{
      name    = "sandbox"
      image   = var.image
      command = var.command
      args    = var.args
      env     = length(var.env) == 0 ? null : [for k, v in var.env : { name = k, value = v }]
      ports   = [{ container_port = var.port }]
      resources = {
        limits = { cpu = var.resources.cpu, memory = var.resources.memory }
      }
    }]
    node_selector = local.dedicated ? { (local.team_label) = var.team } : null
    tolerations   = local.dedicated ? [{ key = local.team_label, operator = "Equal", value = var.team, effect = "NoSchedule" }] : null
  }

  # Isolated by agentsandbox_network_policy.this, whose defaults deny all
  # egress, instead of the controller's managed policy.
  network_policy_management = "Unmanaged"
}

resource "agentsandbox_network_policy" "this" {
  name      = "${var.team}-sandbox-isolation"
  namespace = var.namespace
  template  = agentsandbox_sandbox_template.this.name
  labels    = { (local.team_label) = var.team }

  ingress = [{
    namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "agent-sandbox-system" } }
    pod_selector       = { match_labels = { "app" = "sandbox-router" } }
    ports              = [{ port = tostring(var.port) }]
  }]
  allow_dns = var.allow_dns
  allow_egress = length(var.egress_allow_list) == 0 ? null : [
    for e in var.egress_allow_list : {
      cidr  = e.cidr
      ports = length(e.ports) == 0 ? null : [for p in e.ports : { port = tostring(p) }]
    }
  ]
}

resource "agentsandbox_warm_pool" "this" {
  name            = "${var.team}-pool"
  namespace       = var.namespace
  template        = agentsandbox_sandbox_template.this.name
  replicas        = var.pool_size
  update_strategy = var.update_strategy
  labels          = { (local.team_label) = var.team }

  # The sandboxes need their nodes and must never run unisolated.
  depends_on = [agentsandbox_gke_node_pool.this, agentsandbox_network_policy.this]
}

# The team's sandboxes as they run, for the check below and the
# `isolation` output: read at plan, and after an apply that changes the
# pool (depends_on).
data "agentsandbox_isolation_report" "this" {
  namespace = var.namespace
  selector  = "${local.team_label}=${var.team}"

  depends_on = [agentsandbox_warm_pool.this, agentsandbox_network_policy.this]
}

# Every plan warns when one of the team's sandboxes is not isolated (no
# gVisor, a token, a loosened process setting, a route to the metadata
# server or the Kubernetes API); a check never blocks the apply.
check "sandboxes_isolated" {
  assert {
    condition = data.agentsandbox_isolation_report.this.summary.violations == 0
    error_message = join("\n", [
      for v in data.agentsandbox_isolation_report.this.violations :
      "${v.sandbox}: ${v.title} (${v.attribute}): ${v.message}"
    ])
  }
}
