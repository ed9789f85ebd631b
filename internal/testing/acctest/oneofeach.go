package acctest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// OneOfEachObjects is every resource of OneOfEach, by address, with the API
// resource its object is stored as.
var OneOfEachObjects = map[string]schema.GroupVersionResource{
	"agentsandbox_sandbox_template.python": sandboxapi.SandboxTemplateGVR,
	"agentsandbox_network_policy.isolate":  {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	"agentsandbox_warm_pool.pool":          sandboxapi.SandboxWarmPoolGVR,
	"agentsandbox_sandbox.solo":            sandboxapi.SandboxGVR,
	"agentsandbox_sandbox_claim.claim":     sandboxapi.SandboxClaimGVR,
}

// OneOfEach is a configuration holding one of each single-object resource
// in namespace ns: a template, a network policy selecting its sandboxes, a
// warm pool of two, a claim taking one of them, and a sandbox of its own.
// Every object carries the label test.agentsandbox.dev/stage = stage, so
// changing stage updates all five in place. provider is the provider block;
// extra is appended (a resource a step adds). The fault tests and the CLI
// matrix's lifecycle run it.
func OneOfEach(provider, ns, stage, extra string) string {
	return provider + fmt.Sprintf(`
locals {
  labels = { "test.agentsandbox.dev/stage" = %[2]q }
  # The template's and the sandbox's pods run the same container.
  containers = [{
    name      = "python"
    image     = "registry.example/python-runtime:1"
    resources = { limits = { cpu = "500m", memory = "256Mi" } }
  }]
}

resource "agentsandbox_sandbox_template" "python" {
  name      = "python"
  namespace = %[1]q
  labels    = local.labels
  network_policy_management = "Unmanaged"
  pod_template = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = local.containers
  }
}

resource "agentsandbox_network_policy" "isolate" {
  name      = "isolate"
  namespace = %[1]q
  labels    = local.labels
  template  = agentsandbox_sandbox_template.python.name
  allow_dns = true
}

resource "agentsandbox_warm_pool" "pool" {
  name      = "pool"
  namespace = %[1]q
  labels    = local.labels
  template  = agentsandbox_sandbox_template.python.name
  replicas  = 2
}

resource "agentsandbox_sandbox" "solo" {
  name      = "solo"
  namespace = %[1]q
  labels    = local.labels
  pod_template = {
    containers = local.containers
  }
}

resource "agentsandbox_sandbox_claim" "claim" {
  name      = "claim"
  namespace = %[1]q
  labels    = local.labels
  warm_pool = agentsandbox_warm_pool.pool.name
}
%[3]s`, ns, stage, extra)
}
