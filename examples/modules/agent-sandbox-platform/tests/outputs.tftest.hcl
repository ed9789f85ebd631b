# One team applied to the test cluster (the provider reads KUBECONFIG): the
# outputs are what the team's agents and reviewers rely on, and the objects
# carry the hardened defaults and the team's settings.

provider "agentsandbox" {}

variables {
  team              = "tt-outputs"
  namespace         = "default"
  image             = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
  pool_size         = 2
  allow_dns         = true
  egress_allow_list = [{ cidr = "10.20.0.0/16", ports = [443] }]
  labels            = { "example.com/cost-centre" = "ml" }
  env               = { LOG_LEVEL = "info" }
}

run "apply_one_team" {
  assert {
    condition     = output.template_name == "tt-outputs-sandbox" && output.warm_pool_name == "tt-outputs-pool" && output.network_policy_name == "tt-outputs-sandbox-isolation"
    error_message = "names: template ${output.template_name}, pool ${output.warm_pool_name}, policy ${output.network_policy_name}"
  }
  assert {
    condition     = output.namespace == "default" && output.node_pool_id == null
    error_message = "namespace ${output.namespace}; a team without node_pool must have no node pool"
  }
  assert {
    condition     = output.ready_replicas == 2
    error_message = "the apply waits for the pool: ready_replicas = ${output.ready_replicas}, want 2"
  }
  assert {
    condition     = output.pod_selector == { "agentsandbox.dev/team" = "tt-outputs" }
    error_message = "pod_selector = ${jsonencode(output.pod_selector)}"
  }
  assert {
    condition     = length(output.warm_pool_selector) > 0 && agentsandbox_warm_pool.this.selector == output.warm_pool_selector
    error_message = "warm_pool_selector = ${output.warm_pool_selector}"
  }
  assert {
    condition = (
      yamldecode(output.claim_manifest).kind == "SandboxClaim" &&
      yamldecode(output.claim_manifest).metadata.namespace == "default" &&
      yamldecode(output.claim_manifest).metadata.generateName == "tt-outputs-" &&
      yamldecode(output.claim_manifest).spec.warmPoolRef.name == "tt-outputs-pool"
    )
    error_message = "claim_manifest:\n${output.claim_manifest}"
  }
  # The isolation policy: ingress only from the sandbox router on the port,
  # egress to DNS and the allow-listed range on 443 only.
  assert {
    condition = (
      length(jsondecode(output.network_policy).ingress) == 1 &&
      jsondecode(output.network_policy).ingress[0].ports[0].port == 8888 &&
      jsondecode(output.network_policy).ingress[0].from[0].podSelector.matchLabels.app == "sandbox-router"
    )
    error_message = "ingress rules:\n${output.network_policy}"
  }
  assert {
    condition = anytrue([
      for r in jsondecode(output.network_policy).egress :
      anytrue([for to in try(r.to, []) : try(to.ipBlock.cidr, "") == "10.20.0.0/16"]) && try(r.ports[0].port, 0) == 443
    ])
    error_message = "no egress rule to 10.20.0.0/16:443:\n${output.network_policy}"
  }
  assert {
    condition     = anytrue([for r in jsondecode(output.network_policy).egress : anytrue([for p in try(r.ports, []) : try(p.port, 0) == 53])])
    error_message = "allow_dns = true but no egress rule on port 53:\n${output.network_policy}"
  }
  # The team's settings and the provider's hardened defaults reached the
  # template.
  assert {
    condition = (
      agentsandbox_sandbox_template.this.pod_template.labels["example.com/cost-centre"] == "ml" &&
      agentsandbox_sandbox_template.this.pod_template.labels["agentsandbox.dev/team"] == "tt-outputs" &&
      agentsandbox_sandbox_template.this.pod_template.containers[0].env[0].name == "LOG_LEVEL"
    )
    error_message = "template pod labels or env not the team's"
  }
  assert {
    condition = (
      agentsandbox_sandbox_template.this.pod_template.runtime_class_name == "gvisor" &&
      agentsandbox_sandbox_template.this.pod_template.automount_service_account_token == false &&
      agentsandbox_sandbox_template.this.pod_template.node_selector == null
    )
    error_message = "template not hardened (runtime class, service account token) or pinned to nodes without a dedicated pool"
  }
}

# The first apply's pool, kept for resize_kept_the_pool (under OpenTofu,
# run.apply_one_team is gone once the module is applied again).
run "first_pool" {
  module {
    source = "./tests/fixtures/remember"
  }

  variables {
    value = [run.apply_one_team.warm_pool_name, run.apply_one_team.warm_pool_selector]
  }
}

# The pool follows pool_size in place: same objects, new size.
run "resize_pool" {
  variables {
    pool_size = 3
  }

  assert {
    condition     = output.ready_replicas == 3
    error_message = "after resizing: ready_replicas ${output.ready_replicas}, want 3"
  }
}

# The resize kept the pool: its name and selector are those of the first
# apply (compared in a fixture: OpenTofu's assertions cannot read run.*).
run "resize_kept_the_pool" {
  command = plan

  module {
    source = "./tests/fixtures/compare"
  }

  variables {
    before = run.first_pool.value
    after  = [run.resize_pool.warm_pool_name, run.resize_pool.warm_pool_selector]
  }

  assert {
    condition     = var.before == var.after
    error_message = "the pool changed: ${jsonencode(var.before)} before, ${jsonencode(var.after)} after resizing"
  }
}
