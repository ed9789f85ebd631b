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
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

const poolAddr = "agentsandbox_gke_node_pool.test"

// testAccNodePoolConfig is a node pool in the seeded cluster with extra
// attributes in body.
func testAccNodePoolConfig(env *emutest.Env, name, body string) string {
	return providerConfig(env) + fmt.Sprintf(`
resource "agentsandbox_gke_node_pool" "test" {
  location = %q
  cluster  = %q
  name     = %q
%s
}
`, emutest.Location, emutest.Cluster, name, body)
}

func poolID(name string) string { return emutest.ClusterName + "/nodePools/" + name }

func attr(name string) tfjsonpath.Path { return tfjsonpath.New(name) }

// TestAccGKENodePool_basic creates a pool with nothing but its identity and
// checks the hardened defaults, both in state and in what GKE received, and
// that GKE's own label and taint cause no diff.
func TestAccGKENodePool_basic(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t, resource.TestStep{
		Config:            testAccNodePoolConfig(env, "sandbox", ""),
		ConfigPlanChecks:  acctest.EmptyPlanAfterApply,
		ConfigStateChecks: basicStateChecks("sandbox"),
		Check: checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
			c := np.Config
			switch {
			case c.SandboxConfig == nil || c.SandboxConfig.Type != "GVISOR" || c.ImageType != "COS_CONTAINERD":
				return fmt.Errorf("not a gVisor COS pool: %+v %s", c.SandboxConfig, c.ImageType)
			case c.WorkloadMetadataConfig == nil || c.WorkloadMetadataConfig.Mode != "GKE_METADATA":
				return fmt.Errorf("workload metadata %+v", c.WorkloadMetadataConfig)
			case !c.ShieldedInstanceConfig.EnableSecureBoot || !c.ShieldedInstanceConfig.EnableIntegrityMonitoring:
				return fmt.Errorf("shielded %+v", c.ShieldedInstanceConfig)
			case !np.Management.AutoRepair || !np.Management.AutoUpgrade:
				return fmt.Errorf("management %+v", np.Management)
			case c.Labels["sandbox.gke.io/runtime"] != "gvisor" || len(c.Taints) != 1:
				return fmt.Errorf("GKE's own marks missing: %v %v", c.Labels, c.Taints)
			case size != 1 || np.Status != "RUNNING":
				return fmt.Errorf("size %d status %s", size, np.Status)
			}
			return nil
		}),
	}))
}

// TestAccGKENodePool_microVM: sandbox_type = "MICROVM", the third value of
// SandboxConfig.type in GKE's published API. The pool is created with it
// (what GKE received is checked), no GKE mark is assumed (none is
// documented), it changes in place like a gVisor pool, imports with no
// diff, and changing the type replaces it (the API has no update for it).
func TestAccGKENodePool_microVM(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	microVM := func(body string) string {
		return testAccNodePoolConfig(env, "microvm", "  sandbox_type = \"MICROVM\"\n"+body)
	}
	checkType := func(want string, wantLabels map[string]string) resource.TestCheckFunc {
		return checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
			c := np.Config
			if c.SandboxConfig == nil || c.SandboxConfig.Type != want || c.ImageType != "COS_CONTAINERD" {
				return fmt.Errorf("sandbox %+v image %s, want %s on COS_CONTAINERD", c.SandboxConfig, c.ImageType, want)
			}
			for k, v := range wantLabels {
				if c.Labels[k] != v {
					return fmt.Errorf("labels %v, want %s=%s", c.Labels, k, v)
				}
			}
			return nil
		})
	}
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			Config:           microVM(""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(poolAddr, attr("sandbox_type"), knownvalue.StringExact("MICROVM")),
				statecheck.ExpectKnownValue(poolAddr, attr("image_type"), knownvalue.StringExact("COS_CONTAINERD")),
				statecheck.ExpectKnownValue(poolAddr, attr("labels"), knownvalue.Null()),
				statecheck.ExpectKnownValue(poolAddr, attr("taints"), knownvalue.Null()),
			},
			Check: checkType("MICROVM", nil),
		},
		resource.TestStep{
			Config: microVM(`  node_count = 2
  labels     = { team = "agents" }
  taints     = [{ key = "dedicated", value = "agents", effect = "NO_SCHEDULE" }]
`),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionUpdate),
			Check: resource.ComposeTestCheckFunc(checkType("MICROVM", map[string]string{"team": "agents"}),
				checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
					if size != 2 || len(np.Config.Taints) != 1 {
						return fmt.Errorf("size %d taints %v", size, np.Config.Taints)
					}
					return nil
				})),
		},
		resource.TestStep{
			ResourceName:            poolAddr,
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"node_count"}, // not reported by the container API
		},
		resource.TestStep{
			Config:           testAccNodePoolConfig(env, "microvm", `  node_count = 2`),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionDestroyBeforeCreate),
			Check:            checkType("GVISOR", map[string]string{"sandbox.gke.io/runtime": "gvisor"}),
		},
	))
}

func basicStateChecks(name string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(poolAddr, attr("id"), knownvalue.StringExact(poolID(name))),
		statecheck.ExpectKnownValue(poolAddr, attr("project"), knownvalue.StringExact(emutest.Project)),
		statecheck.ExpectKnownValue(poolAddr, attr("node_count"), knownvalue.Int64Exact(1)),
		statecheck.ExpectKnownValue(poolAddr, attr("sandbox_type"), knownvalue.StringExact("GVISOR")),
		statecheck.ExpectKnownValue(poolAddr, attr("image_type"), knownvalue.StringExact("COS_CONTAINERD")),
		statecheck.ExpectKnownValue(poolAddr, attr("workload_metadata_mode"), knownvalue.StringExact("GKE_METADATA")),
		statecheck.ExpectKnownValue(poolAddr, attr("shielded_instance_config"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"enable_secure_boot": knownvalue.Bool(true), "enable_integrity_monitoring": knownvalue.Bool(true),
		})),
		statecheck.ExpectKnownValue(poolAddr, attr("management"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"auto_repair": knownvalue.Bool(true), "auto_upgrade": knownvalue.Bool(true),
		})),
		statecheck.ExpectKnownValue(poolAddr, attr("labels"), knownvalue.Null()),
		statecheck.ExpectKnownValue(poolAddr, attr("taints"), knownvalue.Null()),
		statecheck.ExpectKnownValue(poolAddr, attr("status"), knownvalue.StringExact("RUNNING")),
		statecheck.ExpectKnownValue(poolAddr, attr("version"), knownvalue.StringExact(gkeemu.DefaultClusterVersion)),
		statecheck.ExpectKnownValue(poolAddr, attr("machine_type"), knownvalue.StringExact("e2-medium")),
		statecheck.ExpectKnownValue(poolAddr, attr("node_locations"), knownvalue.SetSizeExact(3)),
		statecheck.ExpectKnownValue(poolAddr, attr("instance_group_urls"), knownvalue.ListSizeExact(3)),
	}
}

// TestAccGKENodePool_update changes size, autoscaling, labels, taints,
// management, machine type, version and upgrade settings, each in place
// through its API call (never a replacement), with an empty plan after
// every apply.
func TestAccGKENodePool_update(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			Config: testAccNodePoolConfig(env, "sandbox", `
  node_count = 1
  version    = "1.35.2"
  labels     = { team = "agents" }
  taints     = [{ key = "dedicated", value = "agents", effect = "NO_SCHEDULE" }]
`),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(poolAddr, attr("version"), knownvalue.StringExact("1.35.2")),
				statecheck.ExpectKnownValue(poolAddr, attr("labels"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("agents")})),
			},
			Check: checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
				if np.Version != "1.35.2-gke.1269000" {
					return fmt.Errorf("version %s", np.Version)
				}
				return nil
			}),
		},
		resource.TestStep{
			Config: testAccNodePoolConfig(env, "sandbox", `
  node_count   = 3
  version      = "1.35"
  machine_type = "e2-standard-8"
  labels       = { team = "agents", tier = "untrusted" }
  taints       = [
    { key = "dedicated", value = "sandboxes", effect = "NO_EXECUTE" },
    { key = "example.com/cost", effect = "PREFER_NO_SCHEDULE" },
  ]
  management       = { auto_repair = false }
  upgrade_settings = { max_surge = 2, max_unavailable = 1 }
`),
			ConfigPlanChecks: pools(env).Planned(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(poolAddr, attr("node_count"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(poolAddr, attr("version"), knownvalue.StringExact("1.35")),
				statecheck.ExpectKnownValue(poolAddr, attr("management"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"auto_repair": knownvalue.Bool(false), "auto_upgrade": knownvalue.Bool(true),
				})),
			},
			Check: checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
				c := np.Config
				switch {
				case size != 3:
					return fmt.Errorf("size %d", size)
				case np.Version != gkeemu.DefaultClusterVersion:
					return fmt.Errorf("version %s", np.Version)
				case c.MachineType != "e2-standard-8":
					return fmt.Errorf("machine type %s", c.MachineType)
				case len(c.Labels) != 3 || c.Labels["tier"] != "untrusted" || c.Labels["sandbox.gke.io/runtime"] != "gvisor":
					return fmt.Errorf("labels %v", c.Labels)
				case len(c.Taints) != 3 || c.Taints[0].Effect != "NO_EXECUTE" || c.Taints[2].Key != "sandbox.gke.io/runtime":
					return fmt.Errorf("taints %v", c.Taints)
				case np.Management.AutoRepair || !np.Management.AutoUpgrade:
					return fmt.Errorf("management %+v", np.Management)
				case np.UpgradeSettings.MaxSurge != 2 || np.UpgradeSettings.MaxUnavailable != 1:
					return fmt.Errorf("upgrade settings %+v", np.UpgradeSettings)
				}
				return nil
			}),
		},
		resource.TestStep{
			// Autoscaling takes over the size; labels and taints go away.
			Config: testAccNodePoolConfig(env, "sandbox", `
  autoscaling = { min_node_count = 1, max_node_count = 2 }
`),
			ConfigPlanChecks: pools(env).Planned(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(poolAddr, attr("node_count"), knownvalue.Null()),
				statecheck.ExpectKnownValue(poolAddr, attr("autoscaling").AtMapKey("location_policy"), knownvalue.StringExact("BALANCED")),
				statecheck.ExpectKnownValue(poolAddr, attr("labels"), knownvalue.Null()),
			},
			Check: checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
				switch {
				case np.Autoscaling == nil || !np.Autoscaling.Enabled || np.Autoscaling.MaxNodeCount != 2:
					return fmt.Errorf("autoscaling %+v", np.Autoscaling)
				case size != 2:
					return fmt.Errorf("size %d: the autoscaler should have brought 3 down to the max of 2", size)
				case len(np.Config.Labels) != 1 || len(np.Config.Taints) != 1:
					return fmt.Errorf("user labels/taints left: %v %v", np.Config.Labels, np.Config.Taints)
				case !np.Management.AutoRepair:
					return fmt.Errorf("management not back to the default: %+v", np.Management)
				}
				return nil
			}),
		},
		resource.TestStep{
			// Back to a fixed size.
			Config:           testAccNodePoolConfig(env, "sandbox", `  node_count = 2`),
			ConfigPlanChecks: pools(env).Planned(plancheck.ResourceActionUpdate),
			Check: checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
				if np.Autoscaling != nil || size != 2 {
					return fmt.Errorf("autoscaling %+v size %d", np.Autoscaling, size)
				}
				return nil
			}),
		},
	))
	// Every change went through its own API method.
	req := env.Requests()
	for _, m := range []string{gkeapi.MethodNodePoolsUpdate, gkeapi.MethodNodePoolsSetSize, gkeapi.MethodNodePoolsSetAutoscale, gkeapi.MethodNodePoolsSetManage} {
		if req[m] == 0 {
			t.Errorf("%s was never called: %v", m, req)
		}
	}
}

// TestAccGKENodePool_replace: spot cannot change in place (UpdateNodePool
// has no such field), so it replaces the pool; machine type can and does
// not (see TestAccGKENodePool_update).
func TestAccGKENodePool_replace(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	var firstEtag string
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			Config:           testAccNodePoolConfig(env, "sandbox", `  machine_type = "e2-standard-4"`),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
				firstEtag = np.Etag
				return nil
			}),
		},
		resource.TestStep{
			Config: testAccNodePoolConfig(env, "sandbox", `
  machine_type = "e2-standard-4"
  spot         = true
`),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionDestroyBeforeCreate),
			Check: checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
				if !np.Config.Spot {
					return fmt.Errorf("not spot")
				}
				return nil
			}),
		},
	))
	if env.Requests()[gkeapi.MethodNodePoolsDelete] < 2 || firstEtag == "" {
		t.Errorf("expected a delete for the replacement and one for the destroy: %v", env.Requests())
	}
}

// TestAccGKENodePool_import imports by full resource name and verifies
// every attribute against what create stored.
func TestAccGKENodePool_import(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			Config: testAccNodePoolConfig(env, "sandbox", `
  node_count     = 2
  node_locations = ["us-central1-a", "us-central1-b"]
  labels         = { team = "agents" }
  taints         = [{ key = "dedicated", value = "agents", effect = "NO_SCHEDULE" }]
  version        = "1.35"
`),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			ResourceName:      poolAddr,
			ImportState:       true,
			ImportStateVerify: true,
			// The alias "1.35" is configuration; an import sees the
			// version GKE resolved it to.
			ImportStateVerifyIgnore: []string{"version"},
		},
		resource.TestStep{
			// The zones/ form, as in GKE's self links, imports too.
			ResourceName:            poolAddr,
			ImportState:             true,
			ImportStateId:           "projects/emu-project/zones/us-central1/clusters/emu-cluster/nodePools/sandbox",
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"version"},
		},
		resource.TestStep{
			ResourceName:  poolAddr,
			ImportState:   true,
			ImportStateId: "emu-cluster/sandbox",
			ExpectError:   regexp.MustCompile(`(?s)Invalid import ID.*projects/my-project/locations/us-central1`),
		},
	))
}

// TestAccGKENodePool_disappears: a pool deleted outside Terraform is
// dropped from state at refresh and planned for creation again.
func TestAccGKENodePool_disappears(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			Config: testAccNodePoolConfig(env, "sandbox", ""),
			Check: resource.ComposeTestCheckFunc(
				checkPool(env, poolAddr, func(*container.NodePool, int64) error { return nil }),
				func(*terraform.State) error { return env.DeleteNodePool(poolID("sandbox")) },
			),
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionCreate)},
			},
		},
	))
}

// TestAccGKENodePool_drift: labels and management changed outside
// Terraform are put back by the next apply, in place.
func TestAccGKENodePool_drift(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	config := testAccNodePoolConfig(env, "sandbox", `  labels = { team = "agents" }`)
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{Config: config, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			PreConfig: func() {
				if err := env.EditNodePool(poolID("sandbox"), func(np *container.NodePool) {
					np.Config.Labels["team"] = "someone-else"
					np.Management.AutoRepair = false
				}); err != nil {
					t.Fatal(err)
				}
			},
			Config:           config,
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionUpdate),
			Check: checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
				if np.Config.Labels["team"] != "agents" || !np.Management.AutoRepair {
					return fmt.Errorf("drift not repaired: %v %+v", np.Config.Labels, np.Management)
				}
				return nil
			}),
		},
	))
}

// TestAccGKENodePool_busyClusterWaits: while GKE runs its own operation on
// the cluster (an auto-upgrade), creating the pool is refused as busy; the
// provider waits it out and succeeds.
func TestAccGKENodePool_busyClusterWaits(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	var started time.Time
	resource.Test(t, pools(env).Case(t, resource.TestStep{
		PreConfig: func() {
			started = time.Now()
			env.StartClusterOperationBefore(gkeapi.MethodNodePoolsCreate, env.ClusterName, gkeemu.OpUpgradeMaster, 2*time.Second)
		},
		Config:           testAccNodePoolConfig(env, "sandbox", "  timeouts {\n    create = \"1m\"\n  }"),
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		Check: func(*terraform.State) error {
			if n := env.Requests()[gkeapi.MethodNodePoolsCreate]; n < 2 {
				return fmt.Errorf("create sent %d time(s); expected busy refusals before success", n)
			}
			if waited := time.Since(started); waited < 2*time.Second {
				return fmt.Errorf("succeeded after %s, before the cluster's operation ended", waited)
			}
			return nil
		},
	}))
}

// TestAccGKENodePool_busyClusterTimeout: when the cluster stays busy past
// the create timeout, the error says so and what to do.
func TestAccGKENodePool_busyClusterTimeout(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t, resource.TestStep{
		PreConfig: func() {
			if _, err := env.StartClusterOperation(env.ClusterName, gkeemu.OpUpgradeMaster, 10*time.Minute); err != nil {
				t.Fatal(err)
			}
		},
		Config:      testAccNodePoolConfig(env, "sandbox", "  timeouts {\n    create = \"2s\"\n  }"),
		ExpectError: regexp.MustCompile(`(?s)GKE cluster busy with another operation.*is currently upgrading cluster emu-cluster.*Raise this resource's timeouts`),
	}))
}

// TestAccGKENodePool_operationError: an operation that ends in error
// surfaces GKE's own message; the pool GKE left in ERROR is tainted and
// replaced by the next apply.
func TestAccGKENodePool_operationError(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	const quota = `Insufficient regional quota to satisfy request: resource "CPUS": request requires '12.0' and is short '4.0'`
	config := testAccNodePoolConfig(env, "sandbox", `  machine_type = "e2-standard-4"`)
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			PreConfig:   func() { env.FailNextOperation(gkeemu.OpCreateNodePool, "RESOURCE_EXHAUSTED", quota) },
			Config:      config,
			ExpectError: regexp.MustCompile(`(?s)GKE operation failed.*CREATE_NODE_POOL.*RESOURCE_EXHAUSTED.*Insufficient regional\s+quota`),
		},
		resource.TestStep{
			Config:           config,
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionDestroyBeforeCreate),
			Check: checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
				if np.Status != "RUNNING" {
					return fmt.Errorf("status %s", np.Status)
				}
				return nil
			}),
		},
	))
}

// TestAccGKENodePool_updateOperationError: a failed update reports GKE's
// message and records what was applied before it.
func TestAccGKENodePool_updateOperationError(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{Config: testAccNodePoolConfig(env, "sandbox", `  node_count = 1`)},
		resource.TestStep{
			PreConfig: func() {
				env.FailNextOperation(gkeemu.OpSetNodePoolSize, "RESOURCE_EXHAUSTED", "Not enough CPU quota to resize the node pool")
			},
			Config: testAccNodePoolConfig(env, "sandbox", `
  node_count = 5
  labels     = { team = "agents" }
`),
			ExpectError: regexp.MustCompile(`(?s)Changing node_count \(step 2 of 2\).*Not enough CPU quota.*were applied and are recorded`),
		},
		resource.TestStep{
			// Only the size is left to do.
			Config: testAccNodePoolConfig(env, "sandbox", `
  node_count = 5
  labels     = { team = "agents" }
`),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionUpdate, plancheck.ExpectKnownValue(poolAddr, attr("node_count"), knownvalue.Int64Exact(5))),
			Check: checkPool(env, poolAddr, func(_ *container.NodePool, size int64) error {
				if size != 5 {
					return fmt.Errorf("size %d", size)
				}
				return nil
			}),
		},
	))
}

// TestAccGKENodePool_retries429And503: rate limiting (with Retry-After)
// and unavailability are retried by the client; the apply succeeds and
// nothing is created twice.
func TestAccGKENodePool_retries429And503(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	var rateLimited, unavailable, pollFailed *gkeemu.Fault
	resource.Test(t, pools(env).Case(t, resource.TestStep{
		PreConfig: func() {
			rateLimited = env.InjectFault(&gkeemu.Fault{API: gkeapi.MethodNodePoolsCreate, Status: 429, RetryAfter: time.Second})
			unavailable = env.InjectFault(&gkeemu.Fault{API: gkeapi.MethodNodePoolsGet, Status: 503, Times: 2})
			pollFailed = env.InjectFault(&gkeemu.Fault{API: gkeapi.MethodOperationsGet, Status: 503, Latency: 100 * time.Millisecond})
		},
		Config:           testAccNodePoolConfig(env, "sandbox", ""),
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		Check: func(*terraform.State) error {
			if rateLimited.Hits() != 1 || unavailable.Hits() != 2 || pollFailed.Hits() != 1 {
				return fmt.Errorf("faults hit %d, %d, %d times", rateLimited.Hits(), unavailable.Hits(), pollFailed.Hits())
			}
			creates := 0
			for _, op := range env.Operations() {
				if op.OperationType == gkeemu.OpCreateNodePool {
					creates++
				}
			}
			if creates != 1 {
				return fmt.Errorf("%d create operations", creates)
			}
			return nil
		},
	}))
}

// TestAccGKENodePool_refreshCost: refreshing a pool costs one GET.
func TestAccGKENodePool_refreshCost(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			Config:           testAccNodePoolConfig(env, "sandbox", ""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: func(*terraform.State) error {
				// For the record: the whole step (plan, apply, refresh and
				// the plans after it), operations polled every 20-100 ms.
				t.Logf("requests of create + checks: %v", env.Requests())
				return nil
			},
		},
		resource.TestStep{
			PreConfig:    env.ResetRequests,
			RefreshState: true,
			Check: func(*terraform.State) error {
				req := env.Requests()
				t.Logf("requests of one refresh: %v", req)
				if req[gkeapi.MethodNodePoolsGet] != 1 || len(req) != 1 {
					return fmt.Errorf("a refresh of one pool made %v; want exactly one nodePools.get", req)
				}
				return nil
			},
		},
	))
}

// badInputs are configurations GKE would refuse, each caught at plan. The
// fragments must appear in the CLI's output, in order: the summary, the
// quoted configuration line where Terraform can point at it (it points at
// the resource block for paths inside an attribute's value), and the
// detail. TestNodePoolValidationPaths checks the exact attribute paths.
var badInputs = []struct {
	name      string
	body      string
	fragments []string
}{
	{"wrong image type", `  image_type = "UBUNTU_CONTAINERD"`,
		[]string{"Unsupported image type for GKE Sandbox", `image_type = "UBUNTU_CONTAINERD"`, "need COS_CONTAINERD"}},
	{"reserved taint key", `  taints = [{ key = "sandbox.gke.io/runtime", value = "gvisor", effect = "NO_SCHEDULE" }]`,
		[]string{"Invalid value", "The taint key sandbox.gke.io/runtime is reserved"}},
	{"reserved label key", `  labels = { "sandbox.gke.io/runtime" = "gvisor" }`,
		[]string{"GKE-owned label", `labels = { "sandbox.gke.io/runtime" = "gvisor" }`, "Remove it from the configuration"}},
	{"min above max", `  autoscaling = { min_node_count = 5, max_node_count = 2 }`,
		[]string{"Minimum above maximum", "min_node_count (5) is greater than max_node_count (2)"}},
	{"per-zone and total limits", `  autoscaling = { max_node_count = 2, total_max_node_count = 6 }`,
		[]string{"Per-zone and total limits mixed"}},
	{"node_count and autoscaling", "  node_count = 2\n  autoscaling = { max_node_count = 3 }",
		[]string{"Invalid Attribute Combination", "node_count = 2", `"autoscaling"`}},
	{"bad location", "", // the location is set by the test
		[]string{"Invalid value", `location = "us-central"`, `"us-central" is neither a region (us-central1) nor a zone`}},
	{"zone outside the region", `  node_locations = ["europe-west1-b"]`,
		[]string{"Zone outside the cluster's region", `node_locations = ["europe-west1-b"]`, `"europe-west1-b" is not in region us-central1`}},
	{"region as node location", `  node_locations = ["us-central1"]`,
		[]string{`"us-central1" is not a zone`}},
	{"bad taint effect", `  taints = [{ key = "a", effect = "NoSchedule" }]`,
		[]string{"Invalid Attribute Value Match", "effect value must be one of"}},
	{"upgrade cannot progress", `  upgrade_settings = { max_surge = 0, max_unavailable = 0 }`,
		[]string{"Upgrade could never make progress"}},
	{"bad version", `  version = "v1.35"`, []string{`version = "v1.35"`, "must be a GKE version"}},
	{"disk too small", `  disk_size_gb = 5`, []string{`disk_size_gb = 5`, "must be at least 10"}},
	{"bad sandbox type", `  sandbox_type = "KATA"`, []string{`sandbox_type = "KATA"`, `value must be one of: ["GVISOR" "MICROVM"]`}},
	{"bad oauth scope", `  oauth_scopes = ["cloud-platform"]`, []string{`oauth_scopes = ["cloud-platform"]`, "must be a scope URL"}},
	{"cluster given as full name", "", // the cluster is set by the test
		[]string{`cluster  = "projects/emu-project/locations/us-central1/clusters/emu-cluster"`, "Use the cluster's short name here"}},
}

// fragmentsRE matches the fragments in order, allowing the CLI to wrap
// lines anywhere a space was.
func fragmentsRE(fragments []string) *regexp.Regexp {
	parts := make([]string, len(fragments))
	for i, f := range fragments {
		parts[i] = strings.ReplaceAll(regexp.QuoteMeta(f), " ", `\s+`)
	}
	return regexp.MustCompile("(?s)" + strings.Join(parts, ".*"))
}

// TestAccGKENodePool_badInput: every bad input fails at plan, before any
// request to GKE, with a message naming the attribute.
func TestAccGKENodePool_badInput(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			config := testAccNodePoolConfig(env, "sandbox", tc.body)
			switch tc.name {
			case "bad location":
				config = strings.Replace(config, `location = "us-central1"`, `location = "us-central"`, 1)
			case "cluster given as full name":
				config = strings.Replace(config, `cluster  = "emu-cluster"`, `cluster  = "`+emutest.ClusterName+`"`, 1)
			}
			env.ResetRequests()
			resource.Test(t, pools(env).Case(t, resource.TestStep{
				Config:      config,
				PlanOnly:    true,
				ExpectError: fragmentsRE(tc.fragments),
			}))
			if n := env.RequestCount(); n != 0 {
				t.Errorf("%d request(s) reached GKE; bad input must fail at plan: %v", n, env.Requests())
			}
		})
	}
}
