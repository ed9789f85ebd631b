package gke_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

const addonAddr = "agentsandbox_gke_addon.test"

func testAccAddonConfig(env *emutest.Env) string {
	return providerConfig(env) + fmt.Sprintf(`
resource "agentsandbox_gke_addon" "test" {
  location = %q
  cluster  = %q
}
`, emutest.Location, emutest.Cluster)
}

func checkAddon(env *emutest.Env, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, ok := env.Cluster(env.ClusterName)
		if !ok {
			return fmt.Errorf("cluster gone")
		}
		if got := gkeapi.AgentSandboxAddonEnabled(c); got != want {
			return fmt.Errorf("Agent Sandbox add-on enabled = %v, want %v", got, want)
		}
		return nil
	}
}

// TestAccGKEAddon_basic enables the add-on, imports it, and disables it on
// destroy (CheckDestroy asks the emulator).
func TestAccGKEAddon_basic(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, addons(env).Case(t,
		resource.TestStep{
			Config:           testAccAddonConfig(env),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addonAddr, attr("id"), knownvalue.StringExact(emutest.ClusterName)),
				statecheck.ExpectKnownValue(addonAddr, attr("project"), knownvalue.StringExact(emutest.Project)),
			},
			Check: resource.ComposeTestCheckFunc(checkAddon(env, true), func(*terraform.State) error {
				// Only the add-on was sent: other add-ons are untouched.
				if env.Requests()[gkeapi.MethodClustersUpdate] != 1 {
					return fmt.Errorf("clusters.update called %d times", env.Requests()[gkeapi.MethodClustersUpdate])
				}
				return nil
			}),
		},
		resource.TestStep{
			ResourceName:      addonAddr,
			ImportState:       true,
			ImportStateId:     emutest.ClusterName,
			ImportStateVerify: true,
		},
	))
}

// TestAccGKEAddon_disappears: disabled outside Terraform, the add-on is
// dropped from state and enabled again by the next apply.
func TestAccGKEAddon_disappears(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, addons(env).Case(t,
		resource.TestStep{
			Config: testAccAddonConfig(env),
			Check: resource.ComposeTestCheckFunc(checkAddon(env, true),
				func(*terraform.State) error { return env.SetAgentSandboxAddon(env.ClusterName, false) }),
			ExpectNonEmptyPlan: true,
		},
		resource.TestStep{
			Config:           testAccAddonConfig(env),
			ConfigPlanChecks: acctest.PlannedAt(addonAddr, plancheck.ResourceActionCreate),
			Check:            checkAddon(env, true),
		},
	))
}

// TestAccGKEAddon_importDisabled: importing an add-on that is off fails,
// as there is nothing to manage.
func TestAccGKEAddon_importDisabled(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, addons(env).Case(t, resource.TestStep{
		Config:        testAccAddonConfig(env),
		ResourceName:  addonAddr,
		ImportState:   true,
		ImportStateId: emutest.ClusterName,
		ExpectError:   regexp.MustCompile(`(?s)Cannot import non-existent remote object`),
	}))
}

// TestAccGKEAddon_busyCluster: enabling waits while GKE runs another
// operation on the cluster, then succeeds.
func TestAccGKEAddon_busyCluster(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, addons(env).Case(t, resource.TestStep{
		PreConfig: func() {
			env.StartClusterOperationBefore(gkeapi.MethodClustersUpdate, env.ClusterName, gkeemu.OpUpgradeMaster, 1500*time.Millisecond)
		},
		Config:           testAccAddonConfig(env),
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		Check: resource.ComposeTestCheckFunc(checkAddon(env, true), func(*terraform.State) error {
			if n := env.Requests()[gkeapi.MethodClustersUpdate]; n < 2 {
				return fmt.Errorf("clusters.update sent %d time(s); expected busy refusals first", n)
			}
			return nil
		}),
	}))
}

// TestAccGKEAddon_oldCluster: GKE's refusal on a cluster too old for the
// add-on is shown with its message.
func TestAccGKEAddon_oldCluster(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{Version: "1.34.5-gke.1100000"})
	resource.Test(t, addons(env).Case(t, resource.TestStep{
		Config: testAccAddonConfig(env),
		ExpectError: regexp.MustCompile(`(?s)GKE refused the request in the cluster's current state.*Agent\s+Sandbox\s+requires\s+GKE\s+version\s+` +
			regexp.QuoteMeta(gkeemu.MinAgentSandboxVersion)),
	}))
}
