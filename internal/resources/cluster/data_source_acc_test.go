package cluster_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// TestAccClusterDataSource_basic reads the harness's real cluster: its
// version, the agent-sandbox CRDs the harness installed and the gVisor
// RuntimeClass, through the provider served in-process and configured by
// acctest.ProviderConfig. It also proves the chain every resource test
// relies on.
func TestAccClusterDataSource_basic(t *testing.T) {
	host := acctest.RESTConfig(t).Host
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ConfigCompose(
				acctest.ProviderConfig(),
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
				// The harness installs the CRDs of its release profile:
				// v1beta1, plus v1alpha1 on the v0.5.x profiles.
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("sandbox_api_versions"), knownvalue.ListExact(servedVersions(t))),
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

// servedVersions is what the data source must list, sorted, for the
// harness's release profile.
func servedVersions(t *testing.T) []knownvalue.Check {
	t.Helper()
	p, err := testenv.ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if p.ServesV1alpha1 {
		return []knownvalue.Check{
			knownvalue.StringExact("agents.x-k8s.io/v1alpha1"),
			knownvalue.StringExact("agents.x-k8s.io/v1beta1"),
			knownvalue.StringExact("extensions.agents.x-k8s.io/v1alpha1"),
			knownvalue.StringExact("extensions.agents.x-k8s.io/v1beta1"),
		}
	}
	return []knownvalue.Check{
		knownvalue.StringExact("agents.x-k8s.io/v1beta1"),
		knownvalue.StringExact("extensions.agents.x-k8s.io/v1beta1"),
	}
}
