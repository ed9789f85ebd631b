# Every input is refused at plan time, before anything reaches the cluster,
# with the module's own message. Runs without a cluster: no run applies.

variables {
  team      = "tt-valid"
  namespace = "default"
  image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
}

run "valid_inputs_plan" {
  command = plan

  # The isolation check reads the team's sandboxes after the apply that
  # creates them: a plan alone cannot know its result.
  expect_failures = [check.sandboxes_isolated]

  assert {
    condition     = agentsandbox_sandbox_template.this.name == "tt-valid-sandbox" && agentsandbox_warm_pool.this.name == "tt-valid-pool" && agentsandbox_network_policy.this.name == "tt-valid-sandbox-isolation"
    error_message = "every name must start with the team's"
  }
}

run "team_not_a_dns_label" {
  command = plan
  variables { team = "Data_Science" }
  expect_failures = [var.team]
}

run "team_too_long" {
  command = plan
  variables { team = "a-team-name-longer-than-thirty-c" }
  expect_failures = [var.team]
}

run "team_ends_with_dash" {
  command = plan
  variables { team = "data-" }
  expect_failures = [var.team]
}

run "namespace_not_a_dns_label" {
  command = plan
  variables { namespace = "Team Namespace" }
  expect_failures = [var.namespace]
}

run "image_with_whitespace" {
  command = plan
  variables { image = "python 3" }
  expect_failures = [var.image]
}

run "port_out_of_range" {
  command = plan
  variables { port = 70000 }
  expect_failures = [var.port]
}

run "port_not_an_integer" {
  command = plan
  variables { port = 80.5 }
  expect_failures = [var.port]
}

run "cpu_not_a_quantity" {
  command = plan
  variables { resources = { cpu = "two", memory = "1Gi" } }
  expect_failures = [var.resources]
}

run "memory_not_a_quantity" {
  command = plan
  variables { resources = { cpu = "1", memory = "lots" } }
  expect_failures = [var.resources]
}

run "pool_too_large" {
  command = plan
  variables { pool_size = 101 }
  expect_failures = [var.pool_size]
}

run "pool_negative" {
  command = plan
  variables { pool_size = -1 }
  expect_failures = [var.pool_size]
}

run "unknown_update_strategy" {
  command = plan
  variables { update_strategy = "Sometimes" }
  expect_failures = [var.update_strategy]
}

run "egress_cidr_not_canonical" {
  command = plan
  variables { egress_allow_list = [{ cidr = "10.20.1.0/16" }] }
  expect_failures = [var.egress_allow_list]
}

run "egress_cidr_not_a_cidr" {
  command = plan
  variables { egress_allow_list = [{ cidr = "internal-mirror" }] }
  expect_failures = [var.egress_allow_list]
}

run "egress_port_out_of_range" {
  command = plan
  variables { egress_allow_list = [{ cidr = "10.20.0.0/16", ports = [0] }] }
  expect_failures = [var.egress_allow_list]
}

run "node_pool_min_above_max" {
  command = plan
  variables { node_pool = { location = "us-central1", cluster = "agents", min_nodes = 4, max_nodes = 2 } }
  expect_failures = [var.node_pool]
}
