package controller_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestController_ValidationAtPlan: bad input is refused by terraform plan,
// with its attribute, before anything is downloaded or sent. It needs the
// terraform CLI but no cluster.
func TestController_ValidationAtPlan(t *testing.T) {
	cfg := func(body string) string {
		return fmt.Sprintf("provider \"agentsandbox\" {}\n\nresource \"agentsandbox_controller\" \"test\" {\n%s\n}\n", body)
	}
	// Terraform wraps long lines: any space of want may be a line break.
	step := func(body, want string) resource.TestStep {
		return resource.TestStep{Config: cfg(body), PlanOnly: true, ExpectError: regexp.MustCompile(strings.ReplaceAll(want, " ", `\s+`))}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(`version = "1.0.3"`, `(?s)version.*must be a release tag such as v1\.0\.3`),
			step(`version = "v1.0"`, `must be a release tag`),
			step(`
  version         = "v1.0.3"
  manifest_sha256 = "abc"`, `(?s)manifest_sha256.*must be 64 hexadecimal characters`),
			step(`
  version      = "v1.0.3"
  manifest_url = "ftp://example.com/x.yaml"`, `must be an http:// or https:// URL`),
			step(`
  version      = "v1.0.3"
  manifest_url = "https://example.com/x.yaml"
  manifest     = "kind: x"`, `(?s)Invalid Attribute Combination.*manifest`),
			step(`
  version          = "v1.0.3"
  release_base_url = "https://mirror.example.com"
  manifest         = "kind: x"`, `Invalid Attribute Combination`),
			step(`
  version    = "v1.0.3"
  manifest   = "kind: x"
  extensions = false`, `extensions only selects release assets`),
			step(`
  version        = "v1.0.3"
  image_registry = "https://mirror.example.com"`, `must be a registry host`),
			step(`
  version    = "v1.0.3"
  controller = { args = ["leader-elect=false"] }`, `must be a flag such as`),
			step(`
  version    = "v1.0.3"
  controller = { replicas = -1 }`, `(?s)replicas.*between 0 and 100`),
			// Not the framework's "always an error in the provider" with
			// %!s(*big.Float=1.5) (issue 37): nestedattr finds it.
			step(`
  version    = "v1.0.3"
  controller = { replicas = 1.5 }`, `(?s)Not a whole number.*controller\.replicas must be a whole number; 1\.5 has a fractional part. Give an integer such as 1 or 2\.`),
			step(`
  version    = "v1.0.3"
  controller = { resources = { requests = { cpu = "lots" } } }`, `Invalid quantity`),
			step(`
  version    = "v1.0.3"
  controller = { resources = { limits = { "not a name" = "1" } } }`, `Invalid resource name`),
			step(`
  version    = "v1.0.3"
  controller = { node_selector = { "bad key!" = "x" } }`, `Invalid label key`),
			step(`
  version    = "v1.0.3"
  controller = { tolerations = [{ key = "k", operator = "Exists", value = "v" }] }`, `(?s)At controller\.tolerations\[0\]\.value: With operator Exists a toleration matches any value`),
			step(`
  version    = "v1.0.3"
  controller = { tolerations = [{ key = "k", value = "v", effect = "NoSchedule", toleration_seconds = 5 }] }`, `toleration_seconds only applies to effect NoExecute`),
			step(`
  version    = "v1.0.3"
  controller = { tolerations = [{ operator = "Equal", value = "v" }] }`, `A toleration without a key must use operator Exists`),
			step(`
  version    = "v1.0.3"
  controller = { tolerations = [{ key = "k", operator = "Sometimes" }] }`, `(?s)operator.*value must be one of`),
		},
	})
}
