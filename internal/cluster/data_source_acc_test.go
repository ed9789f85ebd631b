package acctest

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccProvider_servedThroughHarness proves the whole chain a resource
// test relies on: terraform-plugin-testing runs the real terraform CLI,
// which talks to the provider served in-process by
// ProtoV6ProviderFactories, configured by ProviderConfig to reach the
// harness's cluster, whose CRDs and RuntimeClass it then reads.
func TestAccProvider_servedThroughHarness(t *testing.T) {
	host := RESTConfig(t).Host
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { PreCheck(t) },
		ProtoV6ProviderFactories: ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: ConfigCompose(
				ProviderConfig(),
				`data "agentsandbox_cluster" "this" {}`,
				// A core resource depending on the data source: the
				// provider's values flow through a plan and an apply.
				`resource "terraform_data" "probe" {
  input = data.agentsandbox_cluster.this.server_version
}`,
			),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("host"), knownvalue.StringExact(host)),
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("server_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.\d+\.\d+`))),
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("gvisor_runtime_class"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("runtime_handler"), knownvalue.StringExact("runsc")),
				// The harness installs exactly the v1beta1 CRDs.
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("sandbox_api_versions"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("agents.x-k8s.io/v1beta1"),
					knownvalue.StringExact("extensions.agents.x-k8s.io/v1beta1"),
				})),
				statecheck.CompareValuePairs(
					"data.agentsandbox_cluster.this", tfjsonpath.New("server_version"),
					"terraform_data.probe", tfjsonpath.New("output"),
					compare.ValuesSame(),
				),
			},
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		}},
	})
}
