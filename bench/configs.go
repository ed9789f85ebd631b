package main

import (
	"fmt"
	"strings"
)

// Provider kinds: how a provider under test is configured. A peer binary
// passed by path is one of these kinds (an older build of this provider is
// "agentsandbox", another untyped manifest provider "kubectl").
const (
	kindFloor        = "floor"        // terraform_data: Terraform's own cost, no provider process
	kindFloorJSON    = "floor-json"   // terraform_data holding the payloads as JSON strings
	kindKubectl      = "kubectl"      // kubectl_manifest, server-side apply
	kindAgentsandbox = "agentsandbox" // this provider's typed resources
)

// The objects of one set, written once in HCL. Every configuration sends the
// same objects: the floor holds these payloads in terraform_data, the
// kubectl peer applies them as YAML, and this provider's typed attributes
// below render exactly these manifests (the defaults it fills in are spelled
// out here, so that the untyped peers are not given less to send). The
// label bench/gen changes in the update phase, on every object.
const setPayloads = `
locals {
  labels = { "app.kubernetes.io/part-of" = "bench", "bench/gen" = var.gen }
  templates = [for i in range(var.n) : {
    apiVersion = "extensions.agents.x-k8s.io/v1beta1"
    kind       = "SandboxTemplate"
    metadata   = { name = "set-${i}", namespace = var.namespace, labels = local.labels }
    spec = {
      networkPolicyManagement = "Unmanaged"
      podTemplate = {
        metadata = { labels = { "app.kubernetes.io/component" = "execution-sandbox", "bench/set" = "set-${i}" } }
        spec = {
          runtimeClassName             = "gvisor"
          automountServiceAccountToken = false
          securityContext = {
            runAsNonRoot   = true
            runAsUser      = 10001
            seccompProfile = { type = "RuntimeDefault" }
          }
          containers = [{
            name  = "python-runtime"
            image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
            ports = [{ containerPort = 8888, protocol = "TCP" }]
            env   = [{ name = "SET", value = "set-${i}" }]
            resources = {
              requests = { cpu = "500m", memory = "1Gi" }
              limits   = { cpu = "1", memory = "1Gi" }
            }
            securityContext = {
              allowPrivilegeEscalation = false
              capabilities             = { drop = ["ALL"] }
            }
          }]
        }
      }
    }
  }]
  pools = [for i in range(var.n) : {
    apiVersion = "extensions.agents.x-k8s.io/v1beta1"
    kind       = "SandboxWarmPool"
    metadata   = { name = "set-${i}", namespace = var.namespace, labels = local.labels }
    spec       = { replicas = 0, sandboxTemplateRef = { name = "set-${i}" } }
  }]
  policies = [for i in range(var.n) : {
    apiVersion = "networking.k8s.io/v1"
    kind       = "NetworkPolicy"
    metadata   = { name = "set-${i}", namespace = var.namespace, labels = local.labels }
    spec = {
      podSelector = { matchLabels = { "bench/set" = "set-${i}" } }
      policyTypes = ["Ingress", "Egress"]
    }
  }]
}
`

const commonVars = `
variable "n" { type = number }
variable "gen" { type = string }
variable "namespace" { type = string }
variable "kubeconfig" { type = string }
`

func setsConfig(kind, source string, opts providerOpts) string {
	var b strings.Builder
	switch kind {
	case kindFloor:
		b.WriteString(commonVars + setPayloads + `
resource "terraform_data" "template" {
  count = var.n
  input = local.templates[count.index]
}
resource "terraform_data" "pool" {
  count = var.n
  input = local.pools[count.index]
}
resource "terraform_data" "policy" {
  count = var.n
  input = local.policies[count.index]
}
`)
	case kindFloorJSON:
		b.WriteString(commonVars + setPayloads + `
resource "terraform_data" "template" {
  count = var.n
  input = jsonencode(local.templates[count.index])
}
resource "terraform_data" "pool" {
  count = var.n
  input = jsonencode(local.pools[count.index])
}
resource "terraform_data" "policy" {
  count = var.n
  input = jsonencode(local.policies[count.index])
}
`)
	case kindKubectl:
		fmt.Fprintf(&b, `
terraform {
  required_providers {
    kubectl = { source = %q }
  }
}
provider "kubectl" {
  config_path      = var.kubeconfig
  load_config_file = true
  apply_retry_count = 0
}
`, source)
		b.WriteString(commonVars + setPayloads + `
resource "kubectl_manifest" "template" {
  count             = var.n
  yaml_body         = yamlencode(local.templates[count.index])
  server_side_apply = true
}
resource "kubectl_manifest" "pool" {
  count             = var.n
  yaml_body         = yamlencode(local.pools[count.index])
  server_side_apply = true
}
resource "kubectl_manifest" "policy" {
  count             = var.n
  yaml_body         = yamlencode(local.policies[count.index])
  server_side_apply = true
}
`)
	case kindAgentsandbox:
		b.WriteString(agentsandboxProvider(source, opts) + commonVars + `
locals {
  labels = { "app.kubernetes.io/part-of" = "bench", "bench/gen" = var.gen }
}
resource "agentsandbox_sandbox_template" "t" {
  count     = var.n
  name      = "set-${count.index}"
  namespace = var.namespace
  labels    = local.labels
  network_policy_management = "Unmanaged"
  pod_template = {
    labels           = { "app.kubernetes.io/component" = "execution-sandbox", "bench/set" = "set-${count.index}" }
    security_context = { run_as_user = 10001 }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports = [{ container_port = 8888 }]
      env   = [{ name = "SET", value = "set-${count.index}" }]
      resources = {
        requests = { cpu = "500m", memory = "1Gi" }
        limits   = { cpu = "1", memory = "1Gi" }
      }
    }]
  }
}
resource "agentsandbox_warm_pool" "p" {
  count          = var.n
  name           = "set-${count.index}"
  namespace      = var.namespace
  labels         = local.labels
  template       = agentsandbox_sandbox_template.t[count.index].name
  replicas       = 0
  wait_for_ready = false
}
resource "agentsandbox_network_policy" "np" {
  count        = var.n
  name         = "set-${count.index}"
  namespace    = var.namespace
  labels       = local.labels
  pod_selector = { match_labels = { "bench/set" = "set-${count.index}" } }
  ingress      = []
}
`)
	default:
		panic("unknown kind " + kind)
	}
	return b.String()
}

type providerOpts struct {
	QPS   float64 `json:"qps,omitempty"`
	Burst int     `json:"burst,omitempty"`
}

func agentsandboxProvider(source string, o providerOpts) string {
	var extra string
	if o.QPS > 0 {
		extra += fmt.Sprintf("    qps = %g\n", o.QPS)
	}
	if o.Burst > 0 {
		extra += fmt.Sprintf("    burst = %d\n", o.Burst)
	}
	return fmt.Sprintf(`
terraform {
  required_providers {
    agentsandbox = { source = %q }
  }
}
provider "agentsandbox" {
  kubernetes {
    config_path = var.kubeconfig
%s  }
}
`, source, extra)
}

// teamsConfig is the daily platform: one module instance per team, each a
// template, a warm pool of two that the apply waits for, a default-deny
// policy and a claim that waits for its sandbox. var.changed names the team
// whose template changes in the "one team changed" phase.
func teamsConfig(source string, opts providerOpts) (root, module string) {
	root = agentsandboxProvider(source, opts) + `
variable "teams" { type = number }
variable "namespace" { type = string }
variable "kubeconfig" { type = string }
variable "changed" {
  type    = number
  default = -1
}
module "team" {
  source    = "./team"
  count     = var.teams
  name      = "team-${count.index}"
  namespace = var.namespace
  image_tag = count.index == var.changed ? "v0.1.1" : "v0.1.0"
}
`
	module = `
terraform {
  required_providers {
    agentsandbox = { source = "` + source + `" }
  }
}
variable "name" { type = string }
variable "namespace" { type = string }
variable "image_tag" { type = string }

resource "agentsandbox_sandbox_template" "this" {
  name      = var.name
  namespace = var.namespace
  network_policy_management = "Unmanaged"
  pod_template = {
    labels           = { "app.kubernetes.io/component" = "execution-sandbox", "team" = var.name }
    security_context = { run_as_user = 10001 }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:${var.image_tag}"
      ports = [{ container_port = 8888 }]
      resources = {
        requests = { cpu = "250m", memory = "512Mi" }
        limits   = { cpu = "500m", memory = "512Mi" }
      }
    }]
  }
}
resource "agentsandbox_warm_pool" "this" {
  name      = var.name
  namespace = var.namespace
  template  = agentsandbox_sandbox_template.this.name
  replicas  = 2
}
resource "agentsandbox_network_policy" "this" {
  name         = var.name
  namespace    = var.namespace
  pod_selector = { match_labels = { "team" = var.name } }
  ingress      = []
}
resource "agentsandbox_sandbox_claim" "this" {
  name      = var.name
  namespace = var.namespace
  warm_pool = agentsandbox_warm_pool.this.name
}
`
	return root, module
}

// isFloor reports whether the subject named name runs no provider (one of
// the floors).
func isFloor(name string) bool { return name == kindFloor || name == kindFloorJSON }
