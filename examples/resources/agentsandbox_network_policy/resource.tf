# The "isolate-untrusted-sandboxes" policy of the GKE Agent Sandbox walkthrough:
# the sandbox pods in agent-sandboxes accept connections only from the sandbox
# router, on port 8888, and reach nothing at all (no egress, so neither the
# metadata server nor cluster DNS).
resource "agentsandbox_network_policy" "isolate_untrusted_sandboxes" {
  name      = "isolate-untrusted-sandboxes"
  namespace = "agent-sandboxes"

  pod_selector = {
    match_labels = { "app.kubernetes.io/component" = "execution-sandbox" }
  }

  # One entry, so both selectors must match: router pods in the router's
  # namespace. (The walkthrough's YAML lists them as two separate peers, which
  # admits every pod of agent-sandbox-system and any pod labelled as the router
  # in agent-sandboxes; see the notes below to write that literally.)
  ingress = [{
    namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "agent-sandbox-system" } }
    pod_selector       = { match_labels = { "app.kubernetes.io/component" = "sandbox-router" } }
    ports              = [{ port = 8888 }]
  }]

  # Egress is denied unless allowed (the walkthrough's `egress: []`).
}

# The sandboxes of one SandboxTemplate, with the defaults: ingress from the
# router (app=sandbox-router in agent-sandbox-system) on 8888, plus cluster DNS
# and the public internet. Private, link-local and unique-local ranges, and
# with them the metadata server, stay unreachable.
resource "agentsandbox_network_policy" "python" {
  name           = "python-sandboxes"
  namespace      = "agent-sandboxes"
  template       = "python-analytics-template"
  allow_dns      = true
  allow_internet = true
}

# Sandboxes that call Google Cloud APIs with Workload Identity on GKE Dataplane
# V2 need the metadata server: allow exactly that address and port, explicitly.
resource "agentsandbox_network_policy" "vertex_tools" {
  name           = "vertex-tool-sandboxes"
  namespace      = "agent-sandboxes"
  template       = "vertex-tools"
  allow_dns      = true
  allow_internet = true

  block_metadata_server = false
  allow_egress = [{
    cidr  = "169.254.169.254/32"
    ports = [{ port = 80 }]
  }]
}

# What reviewers approve is the exact policy.
output "enforced_policy" {
  value = agentsandbox_network_policy.isolate_untrusted_sandboxes.rendered
}
