package gke_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

// TestAccGKEClusterDataSource_basic reads the cluster after a gVisor pool
// and the add-on were created in the same configuration.
func TestAccGKEClusterDataSource_basic(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{Endpoint: "127.0.0.1:16443"})
	const ds = "data.agentsandbox_gke_cluster.test"
	config := testAccNodePoolConfig(env, "sandbox", "") + fmt.Sprintf(`
resource "agentsandbox_gke_addon" "test" {
  location = %[1]q
  cluster  = %[2]q
}

data "agentsandbox_gke_cluster" "test" {
  location   = %[1]q
  name       = %[2]q
  depends_on = [agentsandbox_gke_node_pool.test, agentsandbox_gke_addon.test]
}
`, emutest.Location, emutest.Cluster)
	resource.Test(t, pools(env).Case(t, resource.TestStep{
		Config:           config,
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(ds, attr("id"), knownvalue.StringExact(emutest.ClusterName)),
			statecheck.ExpectKnownValue(ds, attr("endpoint"), knownvalue.StringExact("127.0.0.1:16443")),
			statecheck.ExpectKnownValue(ds, attr("ca_certificate"), knownvalue.StringFunc(func(v string) error {
				if !strings.HasPrefix(v, "-----BEGIN CERTIFICATE-----") {
					return fmt.Errorf("not PEM: %.40q", v)
				}
				return nil
			})),
			statecheck.ExpectKnownValue(ds, attr("version"), knownvalue.StringExact(gkeemu.DefaultClusterVersion)),
			statecheck.ExpectKnownValue(ds, attr("status"), knownvalue.StringExact("RUNNING")),
			statecheck.ExpectKnownValue(ds, attr("autopilot"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue(ds, attr("release_channel"), knownvalue.StringExact("REGULAR")),
			statecheck.ExpectKnownValue(ds, attr("workload_pool"), knownvalue.StringExact(emutest.Project+".svc.id.goog")),
			statecheck.ExpectKnownValue(ds, attr("agent_sandbox_enabled"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(ds, attr("node_pools"), knownvalue.ListExact([]knownvalue.Check{
				knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"name": knownvalue.StringExact("default-pool"), "sandbox_type": knownvalue.StringExact(""),
				}),
				knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"name": knownvalue.StringExact("sandbox"), "sandbox_type": knownvalue.StringExact("GVISOR"),
					"image_type": knownvalue.StringExact("COS_CONTAINERD"), "status": knownvalue.StringExact("RUNNING"),
					"node_locations": knownvalue.ListSizeExact(3), "autoscaling_enabled": knownvalue.Bool(false),
				}),
			})),
		},
	}))
}
