package sandboxclaim_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

const data = "data.agentsandbox_sandbox_claim.test"

// TestAccSandboxClaimDataSource_basic reads the claim's live status: the
// same sandbox and IPs as the resource, and the Ready reason.
func TestAccSandboxClaimDataSource_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "Allowed")
	name := acctest.RandomName("session")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name
  shutdown_time = "2040-01-01T00:00:00Z"
  additional_pod_metadata = { labels = { "sandbox.users.io/session" = "s1" } }
}

data "agentsandbox_sandbox_claim" "test" {
  name      = agentsandbox_sandbox_claim.test.name
  namespace = agentsandbox_sandbox_claim.test.namespace`),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(data, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("warm_pool"), knownvalue.StringExact("pool-a")),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("shutdown_time"), knownvalue.StringExact("2040-01-01T00:00:00Z")),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("shutdown_policy"), knownvalue.StringExact("Retain")),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ttl_seconds_after_finished"), knownvalue.Null()),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("env"), knownvalue.Null()),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("volume_claim_templates"), knownvalue.Null()),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("additional_pod_metadata").AtMapKey("labels"),
				knownvalue.MapExact(map[string]knownvalue.Check{"sandbox.users.io/session": knownvalue.StringExact("s1")})),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready_reason"), knownvalue.StringExact("DependenciesReady")),
			statecheck.CompareValuePairs(data, tfjsonpath.New("sandbox_name"), address, tfjsonpath.New("sandbox_name"), compareEqual{}),
			statecheck.CompareValuePairs(data, tfjsonpath.New("pod_ips"), address, tfjsonpath.New("pod_ips"), compareEqual{}),
			// The controller's annotation naming the sandbox is there too.
			statecheck.ExpectKnownValue(data, tfjsonpath.New("annotations"), knownvalue.MapPartial(map[string]knownvalue.Check{
				"agents.x-k8s.io/sandbox-name": knownvalue.StringRegexp(regexp.MustCompile(`^pool-a-`)),
			})),
		},
	}))
}

// TestAccSandboxClaimDataSource_volumeClaimTemplates reads the volume claim
// templates a claim asks for, as the resource wrote them.
func TestAccSandboxClaimDataSource_volumeClaimTemplates(t *testing.T) {
	ns := acctest.Namespace(t)
	volumesTemplate(t, ns, "Allowed")
	name := acctest.RandomName("session")
	vct := tfjsonpath.New("volume_claim_templates").AtSliceIndex(0)
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: claimConfig(ns, name, `  warm_pool      = agentsandbox_warm_pool.a.name
  wait_for_ready = false
  volume_claim_templates = [{
    name               = "workspace"
    access_modes       = ["ReadWriteOnce"]
    storage_class_name = "fast"
    labels             = { "team" = "a" }
    resources          = { requests = { storage = "1Gi" } }
  }]
}

data "agentsandbox_sandbox_claim" "test" {
  name      = agentsandbox_sandbox_claim.test.name
  namespace = agentsandbox_sandbox_claim.test.namespace`),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(data, tfjsonpath.New("volume_claim_templates"), knownvalue.ListSizeExact(1)),
			statecheck.ExpectKnownValue(data, vct.AtMapKey("name"), knownvalue.StringExact("workspace")),
			statecheck.ExpectKnownValue(data, vct.AtMapKey("access_modes"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("ReadWriteOnce")})),
			statecheck.ExpectKnownValue(data, vct.AtMapKey("storage_class_name"), knownvalue.StringExact("fast")),
			statecheck.ExpectKnownValue(data, vct.AtMapKey("labels"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("a")})),
			statecheck.ExpectKnownValue(data, vct.AtMapKey("resources").AtMapKey("requests").AtMapKey("storage"), knownvalue.StringExact("1Gi")),
			statecheck.ExpectKnownValue(data, vct.AtMapKey("volume_mode"), knownvalue.Null()),
			statecheck.CompareValuePairs(data, tfjsonpath.New("volume_claim_templates"), address, tfjsonpath.New("volume_claim_templates"), compareEqual{}),
		},
	}))
}

// TestAccSandboxClaimDataSource_failing reads a claim the controller cannot
// serve: not ready, with the controller's reason.
func TestAccSandboxClaimDataSource_failing(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("session")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_claim" "test" {
  name           = %[1]q
  namespace      = %[2]q
  warm_pool      = "no-such-pool"
  wait_for_ready = false
}

data "agentsandbox_sandbox_claim" "test" {
  name      = agentsandbox_sandbox_claim.test.name
  namespace = %[2]q
}
`, name, ns)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("sandbox_name"), knownvalue.StringExact("")),
		},
		// The data source may read the claim before the controller has
		// reported, so the reason is checked once more after a refresh.
		Check: resource.TestCheckResourceAttrSet(data, "id"),
	}, resource.TestStep{
		Config: acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_claim" "test" {
  name           = %[1]q
  namespace      = %[2]q
  warm_pool      = "no-such-pool"
  wait_for_ready = false
}

data "agentsandbox_sandbox_claim" "test" {
  name      = agentsandbox_sandbox_claim.test.name
  namespace = %[2]q
}
`, name, ns)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready_reason"), knownvalue.StringExact("WarmPoolNotFound")),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready_message"), knownvalue.StringRegexp(regexp.MustCompile(`no-such-pool`))),
		},
	}))
}

func TestAccSandboxClaimDataSource_notFound(t *testing.T) {
	ns := acctest.Namespace(t)
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: acctest.Config(fmt.Sprintf(`
data "agentsandbox_sandbox_claim" "test" {
  name      = "no-such-claim"
  namespace = %q
}
`, ns)),
		ExpectError: regexp.MustCompile(`(?s)SandboxClaim\s+"` + regexp.QuoteMeta(ns) + `/no-such-claim"\s+not\s+found.*Delete`),
	}))
}

// compareEqual is a compare.ValueComparer for two identical values.
type compareEqual struct{}

func (compareEqual) CompareValues(values ...any) error {
	if len(values) != 2 || fmt.Sprint(values[0]) != fmt.Sprint(values[1]) {
		return fmt.Errorf("values differ: %v", values)
	}
	return nil
}
