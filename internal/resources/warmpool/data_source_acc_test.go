package warmpool_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccWarmPoolDataSource_basic reads a pool's live status, including
// the labels others put on it.
func TestAccWarmPoolDataSource_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("pool")
	const data = "data.agentsandbox_warm_pool.test"
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: acctest.Config(fmt.Sprintf(`
resource "agentsandbox_warm_pool" "test" {
  name      = %[1]q
  namespace = %[2]q
  template  = "python"
  replicas  = 3
  labels    = { team = "a" }
}

data "agentsandbox_warm_pool" "test" {
  name      = agentsandbox_warm_pool.test.name
  namespace = agentsandbox_warm_pool.test.namespace
}
`, name, ns)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(data, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("template"), knownvalue.StringExact("python")),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("replicas"), knownvalue.Int64Exact(3)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("current_replicas"), knownvalue.Int64Exact(3)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready_replicas"), knownvalue.Int64Exact(3)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("ready"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("update_strategy"), knownvalue.StringExact("OnReplenish")),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("selector"), knownvalue.StringExact(sandboxapi.WarmPoolSelector(name))),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("labels"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("a")})),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("annotations"), knownvalue.MapSizeExact(0)),
		},
	}))
}

func TestAccWarmPoolDataSource_notFound(t *testing.T) {
	ns := acctest.Namespace(t)
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: acctest.Config(fmt.Sprintf(`
data "agentsandbox_warm_pool" "test" {
  name      = "no-such-pool"
  namespace = %q
}
`, ns)),
		ExpectError: regexp.MustCompile(`SandboxWarmPool\s+"` + regexp.QuoteMeta(ns) + `/no-such-pool"\s+not\s+found`),
	}))
}
