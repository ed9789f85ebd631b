package gke_test

import (
	"fmt"
	"regexp"
	"strings"
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

const snapshotsAddr = "agentsandbox_gke_pod_snapshots.test"

func testAccPodSnapshotsConfig(env *emutest.Env, extra string) string {
	return providerConfig(env) + fmt.Sprintf(`
resource "agentsandbox_gke_pod_snapshots" "test" {
  location = %q
  cluster  = %q
%s}
`, emutest.Location, emutest.Cluster, extra)
}

// checkCluster checks the two switches as the emulator holds them.
func checkCluster(env *emutest.Env, snapshots, agentSandbox bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, ok := env.Cluster(env.ClusterName)
		if !ok {
			return fmt.Errorf("cluster gone")
		}
		if got := gkeapi.PodSnapshotsEnabled(c); got != snapshots {
			return fmt.Errorf("Pod snapshots enabled = %v, want %v", got, snapshots)
		}
		if got := gkeapi.AgentSandboxAddonEnabled(c); got != agentSandbox {
			return fmt.Errorf("Agent Sandbox add-on enabled = %v, want %v", got, agentSandbox)
		}
		return nil
	}
}

// TestAccGKEPodSnapshots_basic enables Pod snapshots (one cluster update
// carrying podSnapshotConfig alone), plans nothing after, imports them,
// changes the timeouts in place, and disables them on destroy
// (CheckDestroy asks the emulator).
func TestAccGKEPodSnapshots_basic(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, snapshots(env).Case(t,
		resource.TestStep{
			Config:           testAccPodSnapshotsConfig(env, ""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(snapshotsAddr, attr("id"), knownvalue.StringExact(emutest.ClusterName)),
				statecheck.ExpectKnownValue(snapshotsAddr, attr("project"), knownvalue.StringExact(emutest.Project)),
			},
			Check: resource.ComposeTestCheckFunc(checkCluster(env, true, false), func(*terraform.State) error {
				if n := env.Requests()[gkeapi.MethodClustersUpdate]; n != 1 {
					return fmt.Errorf("clusters.update called %d times", n)
				}
				return nil
			}),
		},
		resource.TestStep{
			ResourceName:      snapshotsAddr,
			ImportState:       true,
			ImportStateId:     emutest.ClusterName,
			ImportStateVerify: true,
		},
		resource.TestStep{
			// Timeouts are the only attribute that changes in place; the
			// update sends nothing to GKE.
			PreConfig:        env.ResetRequests,
			Config:           testAccPodSnapshotsConfig(env, "  timeouts {\n    create = \"5m\"\n  }\n"),
			ConfigPlanChecks: acctest.PlannedAt(snapshotsAddr, plancheck.ResourceActionUpdate),
			Check: resource.ComposeTestCheckFunc(checkCluster(env, true, false), func(*terraform.State) error {
				if n := env.Requests()[gkeapi.MethodClustersUpdate]; n != 0 {
					return fmt.Errorf("clusters.update called %d times for a timeouts change", n)
				}
				return nil
			}),
		},
	))
}

// TestAccGKEPodSnapshots_replace: another cluster replaces the resource:
// snapshots are turned off on the old cluster and on on the new one.
func TestAccGKEPodSnapshots_replace(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	other, err := env.AddCluster(gkeemu.ClusterSpec{Project: emutest.Project, Location: emutest.Location, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	otherConfig := strings.Replace(testAccPodSnapshotsConfig(env, ""), fmt.Sprintf("%q", emutest.Cluster), `"other"`, 1)
	resource.Test(t, snapshots(env).Case(t,
		resource.TestStep{Config: testAccPodSnapshotsConfig(env, ""), Check: checkCluster(env, true, false)},
		resource.TestStep{
			Config:           otherConfig,
			ConfigPlanChecks: acctest.PlannedAt(snapshotsAddr, plancheck.ResourceActionDestroyBeforeCreate),
			Check: resource.ComposeTestCheckFunc(checkCluster(env, false, false), func(*terraform.State) error {
				c, _ := env.Cluster(other)
				if !gkeapi.PodSnapshotsEnabled(c) {
					return fmt.Errorf("Pod snapshots not enabled on %s", other)
				}
				return nil
			}),
		},
	))
}

// TestAccGKEPodSnapshots_disappears: disabled outside Terraform, the
// feature is dropped from state and enabled again by the next apply.
func TestAccGKEPodSnapshots_disappears(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, snapshots(env).Case(t,
		resource.TestStep{
			Config: testAccPodSnapshotsConfig(env, ""),
			Check: resource.ComposeTestCheckFunc(checkCluster(env, true, false),
				func(*terraform.State) error { return env.SetPodSnapshots(env.ClusterName, false) }),
			ExpectNonEmptyPlan: true,
		},
		resource.TestStep{
			Config:           testAccPodSnapshotsConfig(env, ""),
			ConfigPlanChecks: acctest.PlannedAt(snapshotsAddr, plancheck.ResourceActionCreate),
			Check:            checkCluster(env, true, false),
		},
	))
}

// TestAccGKEPodSnapshots_adopted: snapshots already on are adopted with a
// warning and no request that changes anything.
func TestAccGKEPodSnapshots_adopted(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{PodSnapshots: true})
	resource.Test(t, snapshots(env).Case(t, resource.TestStep{
		Config:           testAccPodSnapshotsConfig(env, ""),
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		Check: resource.ComposeTestCheckFunc(checkCluster(env, true, false), func(*terraform.State) error {
			if n := env.Requests()[gkeapi.MethodClustersUpdate]; n != 0 {
				return fmt.Errorf("clusters.update called %d times for snapshots already on", n)
			}
			return nil
		}),
	}))
}

// TestAccGKEPodSnapshots_withAgentSandboxAddon: the two resources of one
// cluster each own their switch: both on in one apply, and removing one
// turns off only its own.
func TestAccGKEPodSnapshots_withAgentSandboxAddon(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	both := testAccPodSnapshotsConfig(env, "") + fmt.Sprintf(`
resource "agentsandbox_gke_addon" "test" {
  location = %q
  cluster  = %q

  # GKE runs one operation per cluster at a time; the provider waits, but
  # ordering them keeps the plan readable.
  depends_on = [agentsandbox_gke_pod_snapshots.test]
}
`, emutest.Location, emutest.Cluster)
	resource.Test(t, snapshots(env).Case(t,
		resource.TestStep{Config: both, ConfigPlanChecks: acctest.EmptyPlanAfterApply, Check: checkCluster(env, true, true)},
		resource.TestStep{
			Config:           testAccPodSnapshotsConfig(env, ""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check:            checkCluster(env, true, false),
		},
	))
}

// TestAccGKEPodSnapshots_importDisabled: importing snapshots that are off
// fails, as there is nothing to manage.
func TestAccGKEPodSnapshots_importDisabled(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, snapshots(env).Case(t, resource.TestStep{
		Config:        testAccPodSnapshotsConfig(env, ""),
		ResourceName:  snapshotsAddr,
		ImportState:   true,
		ImportStateId: emutest.ClusterName,
		ExpectError:   regexp.MustCompile(`(?s)Cannot import non-existent remote object`),
	}))
}

// TestAccGKEPodSnapshots_badImportID names the expected form of the ID.
func TestAccGKEPodSnapshots_badImportID(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, snapshots(env).Case(t, resource.TestStep{
		Config:        testAccPodSnapshotsConfig(env, ""),
		ResourceName:  snapshotsAddr,
		ImportState:   true,
		ImportStateId: "emu-cluster",
		ExpectError: regexp.MustCompile(`(?s)Invalid import ID.*Import the Pod snapshots feature by its cluster's full resource name.*` +
			`terraform import agentsandbox_gke_pod_snapshots.this projects/my-project/locations/us-central1/clusters/my-cluster`),
	}))
}

// TestAccGKEPodSnapshots_busyCluster: enabling waits while GKE runs
// another operation on the cluster, then succeeds.
func TestAccGKEPodSnapshots_busyCluster(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, snapshots(env).Case(t, resource.TestStep{
		PreConfig: func() {
			env.StartClusterOperationBefore(gkeapi.MethodClustersUpdate, env.ClusterName, gkeemu.OpUpgradeMaster, 1500*time.Millisecond)
		},
		Config:           testAccPodSnapshotsConfig(env, ""),
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		Check: resource.ComposeTestCheckFunc(checkCluster(env, true, false), func(*terraform.State) error {
			if n := env.Requests()[gkeapi.MethodClustersUpdate]; n < 2 {
				return fmt.Errorf("clusters.update sent %d time(s); expected busy refusals first", n)
			}
			return nil
		}),
	}))
}

// TestAccGKEPodSnapshots_oldCluster: GKE's refusal on a cluster older
// than the documented minimum is shown with its message.
func TestAccGKEPodSnapshots_oldCluster(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{Version: "1.34.0-gke.1000000", NodeVersions: []string{}})
	resource.Test(t, snapshots(env).Case(t, resource.TestStep{
		Config: testAccPodSnapshotsConfig(env, ""),
		ExpectError: regexp.MustCompile(`(?s)GKE refused the request in the cluster's current state.*Pod\s+snapshots\s+require\s+GKE\s+version\s+` +
			regexp.QuoteMeta(gkeemu.MinPodSnapshotsVersion)),
	}))
}

// TestAccGKEPodSnapshots_faults enables and disables Pod snapshots
// through the fault kinds the add-on's tests use: the enabling update's
// answer lost after GKE made the change, the cluster read reset before it
// is served, 429 with Retry-After and 503 on operation polls, slow
// answers; then the disable through a 503. Each apply succeeds with one
// operation per change, and the plan after it is empty.
func TestAccGKEPodSnapshots_faults(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	l := &faultLog{env: env, faults: map[string]*gkeemu.Fault{}}
	t.Cleanup(func() { l.report(t) })
	resource.Test(t, snapshots(env).Case(t,
		resource.TestStep{
			PreConfig: func() {
				l.inject("enable: reset after served", &gkeemu.Fault{API: gkeapi.MethodClustersUpdate, Reset: gkeemu.ResetAfter})
				l.inject("cluster get: reset before served", &gkeemu.Fault{API: gkeapi.MethodClustersGet, Reset: gkeemu.ResetBefore})
				l.inject("operation get: 429 Retry-After", &gkeemu.Fault{API: gkeapi.MethodOperationsGet, Status: 429, RetryAfter: time.Second})
				l.inject("operation get: 503", &gkeemu.Fault{API: gkeapi.MethodOperationsGet, Status: 503})
				l.inject("slow: 1 s", &gkeemu.Fault{Latency: time.Second, Times: 2})
			},
			Config:           testAccPodSnapshotsConfig(env, ""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: resource.ComposeTestCheckFunc(checkCluster(env, true, false), func(*terraform.State) error {
				if n := countOps(env, gkeemu.OpUpdateCluster); n > 2 {
					return fmt.Errorf("%d cluster update operations for one enable", n)
				}
				return l.hit(1, "enable: reset after served", "cluster get: reset before served",
					"operation get: 429 Retry-After", "operation get: 503")
			}),
		},
		resource.TestStep{
			PreConfig: func() {
				l.inject("disable: 503", &gkeemu.Fault{API: gkeapi.MethodClustersUpdate, Status: 503})
			},
			Config: providerConfig(env),
			Check: resource.ComposeTestCheckFunc(checkCluster(env, false, false), func(*terraform.State) error {
				return l.hit(1, "disable: 503")
			}),
		},
	))
}
