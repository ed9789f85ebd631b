# Warn in every plan when a sandbox is not isolated as it runs. A check
# never blocks: a failed assertion is a warning. depends_on makes Terraform
# read the report again after an apply that changes what it reports on;
# with nothing to change it is read at plan. (A data block nested in the
# check block would work too, but Terraform reads such a block again at
# every apply, so `plan -detailed-exitcode` would never report "no
# changes".)
data "agentsandbox_isolation_report" "agents" {
  namespace = "agents"
  selector  = "app.kubernetes.io/component=execution-sandbox"

  depends_on = [agentsandbox_warm_pool.python]
}

check "sandboxes_isolated" {
  assert {
    condition = data.agentsandbox_isolation_report.agents.summary.violations == 0
    error_message = join("\n", [
      for v in data.agentsandbox_isolation_report.agents.violations :
      "${v.sandbox}: ${v.title} (${v.attribute}): ${v.message}"
    ])
  }
}

# Fail the plan instead: a postcondition on the report is an error. Here
# every sandbox must run in gVisor without a token, and neither the
# metadata server nor an internal service of your own may be reachable
# (its verdict is under network.egress["billing_api"]).
data "agentsandbox_isolation_report" "strict" {
  namespace = "agents"

  destinations = [{ name = "billing_api", address = "10.20.0.15", port = 443 }]

  lifecycle {
    postcondition {
      condition = alltrue([
        for s in self.sandboxes :
        s.runtime.gvisor && !s.identity.token_mounted &&
        s.network.egress["metadata_server_ipv4"].verdict != "allowed" &&
        s.network.egress["billing_api"].verdict != "allowed"
      ])
      error_message = join("\n", concat(
        [for s in self.sandboxes : "${s.name}: billing API ${s.network.egress["billing_api"].reason}" if s.network.egress["billing_api"].verdict == "allowed"],
        [for v in self.violations : "${v.sandbox}: ${v.title}: ${v.message}"],
      ))
    }
  }
}

output "isolation" {
  value = data.agentsandbox_isolation_report.strict.summary
}
