# Two teams in one cluster and one namespace (tests/fixtures/teams
# instantiates the module once per team): no name, label or selector
# collides, and a plan that removes one team leaves the other untouched.

provider "agentsandbox" {}

run "two_teams" {
  module {
    source = "./tests/fixtures/teams"
  }

  variables {
    teams = { "tt-alpha" = 2, "tt-beta" = 1 }
  }

  assert {
    condition     = module.team["tt-alpha"].ready_replicas == 2 && module.team["tt-beta"].ready_replicas == 1
    error_message = "ready: alpha ${module.team["tt-alpha"].ready_replicas}/2, beta ${module.team["tt-beta"].ready_replicas}/1"
  }
  assert {
    condition = alltrue([
      for attr in ["template_name", "warm_pool_name", "network_policy_name", "warm_pool_selector"] :
      length(distinct([for t in module.team : t[attr]])) == 2
    ])
    error_message = "two teams share a name or selector: ${jsonencode({ for k, t in module.team : k => [t.template_name, t.warm_pool_name, t.network_policy_name, t.warm_pool_selector] })}"
  }
  assert {
    condition     = module.team["tt-alpha"].pod_selector != module.team["tt-beta"].pod_selector
    error_message = "both teams' pods carry the same labels"
  }
  # Each team's isolation report covers its own sandboxes, as they run,
  # and finds every one isolated.
  assert {
    condition = alltrue([
      for k, t in module.team : t.isolation.sandboxes == var.teams[k] && t.isolation.pods == var.teams[k] && t.isolation.clean == var.teams[k] && t.isolation.violations == 0
    ])
    error_message = "isolation reports: ${jsonencode({ for k, t in module.team : k => t.isolation })}"
  }
  # Each team's isolation policy selects its own template's sandboxes only.
  assert {
    condition     = jsondecode(module.team["tt-alpha"].network_policy).podSelector != jsondecode(module.team["tt-beta"].network_policy).podSelector
    error_message = "both isolation policies select the same pods"
  }
}

run "plan_without_beta" {
  command = plan

  module {
    source = "./tests/fixtures/teams"
  }

  variables {
    teams = { "tt-alpha" = 2 }
    # OpenTofu's assertions cannot read run.*; a run's variables can.
    before = run.two_teams.teams
  }

  assert {
    condition     = length(module.team) == 1 && contains(keys(module.team), "tt-alpha")
    error_message = "teams planned: ${jsonencode(keys(module.team))}"
  }
  # Alpha's computed values are still known and the same: none of its
  # objects is replaced or updated (either would make them unknown).
  assert {
    condition = (
      module.team["tt-alpha"].ready_replicas == var.before["tt-alpha"].ready_replicas &&
      module.team["tt-alpha"].warm_pool_selector == var.before["tt-alpha"].warm_pool_selector &&
      module.team["tt-alpha"].network_policy == var.before["tt-alpha"].network_policy
    )
    error_message = "the plan changes team alpha"
  }
}

run "apply_without_beta" {
  module {
    source = "./tests/fixtures/teams"
  }

  variables {
    teams = { "tt-alpha" = 2 }
  }

  assert {
    condition     = data.agentsandbox_warm_pool.alpha.ready_replicas == 2
    error_message = "team alpha's pool after beta's removal: ${data.agentsandbox_warm_pool.alpha.ready_replicas}/2 ready"
  }
}
