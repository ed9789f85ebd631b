package gke_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

// faultLog keeps every fault a test injected, by the step that injected
// it, for the checks and the closing figures.
type faultLog struct {
	env    *emutest.Env
	faults map[string]*gkeemu.Fault
}

func (l *faultLog) inject(name string, f *gkeemu.Fault) {
	l.faults[name] = l.env.InjectFault(f)
}

// hit fails unless each named fault applied exactly want times.
func (l *faultLog) hit(want int, names ...string) error {
	var bad []string
	for _, n := range names {
		if got := l.faults[n].Hits(); got != want {
			bad = append(bad, fmt.Sprintf("%s hit %d times, want %d", n, got, want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func (l *faultLog) report(t *testing.T) {
	names := make([]string, 0, len(l.faults))
	total := 0
	for n, f := range l.faults {
		names = append(names, fmt.Sprintf("%s=%d", n, f.Hits()))
		total += f.Hits()
	}
	sort.Strings(names)
	t.Logf("%d faults injected: %s", total, strings.Join(names, " "))
}

func countOps(env *emutest.Env, typ string) int {
	n := 0
	for _, op := range env.Operations() {
		if op.OperationType == typ {
			n++
		}
	}
	return n
}

// faultsConfig is a node pool and the Agent Sandbox add-on of the same
// cluster; body goes into the pool.
func faultsConfig(env *emutest.Env, body string) string {
	return testAccNodePoolConfig(env, "sandbox", body) + fmt.Sprintf(`
resource "agentsandbox_gke_addon" "test" {
  location = %q
  cluster  = %q

  depends_on = [agentsandbox_gke_node_pool.test]
}
`, emutest.Location, emutest.Cluster)
}

// TestAccGKE_faults runs the node pool's lifecycle (create, update in
// place, import, destroy) and the add-on's (enable, disable) through the
// emulator's faults: connection resets before a request is served and
// after it was (the answer is lost, the change made), 429 with
// Retry-After, 503 and slow answers. Every apply succeeds, nothing is
// created twice, the plan after each apply is empty, and the destroy
// leaves nothing. Then a fault that outlasts the retries fails the apply
// with what failed and that applying again is safe, and the next apply
// converges.
func TestAccGKE_faults(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	l := &faultLog{env: env, faults: map[string]*gkeemu.Fault{}}
	t.Cleanup(func() { l.report(t) })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(env),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					l.inject("create: reset after served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsCreate, Reset: gkeemu.ResetAfter})
					l.inject("pool get: reset before served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsGet, Reset: gkeemu.ResetBefore})
					l.inject("operation get: 429 Retry-After", &gkeemu.Fault{API: gkeapi.MethodOperationsGet, Status: 429, RetryAfter: time.Second})
					l.inject("cluster get: 503", &gkeemu.Fault{API: gkeapi.MethodClustersGet, Status: 503})
					l.inject("addon enable: reset after served", &gkeemu.Fault{API: gkeapi.MethodClustersUpdate, Reset: gkeemu.ResetAfter})
					l.inject("slow: 1.5 s", &gkeemu.Fault{Latency: 1500 * time.Millisecond, Times: 3})
				},
				Config:           faultsConfig(env, `  node_count = 1`),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeTestCheckFunc(
					checkAddon(env, true),
					func(*terraform.State) error {
						if n := countOps(env, gkeemu.OpCreateNodePool); n != 1 {
							return fmt.Errorf("%d create operations, want 1 (the lost answer's create resent)", n)
						}
						return l.hit(1, "create: reset after served", "pool get: reset before served",
							"operation get: 429 Retry-After", "cluster get: 503", "addon enable: reset after served")
					},
				),
			},
			{
				PreConfig: func() {
					l.inject("set size: reset after served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsSetSize, Reset: gkeemu.ResetAfter})
					l.inject("update: reset before served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsUpdate, Reset: gkeemu.ResetBefore})
					l.inject("update: 503", &gkeemu.Fault{API: gkeapi.MethodNodePoolsUpdate, Status: 503})
				},
				Config: faultsConfig(env, `
  node_count = 3
  labels     = { team = "agents" }
`),
				ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionUpdate,
					plancheck.ExpectKnownValue(poolAddr, attr("node_count"), knownvalue.Int64Exact(3))),
				Check: resource.ComposeTestCheckFunc(
					checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
						if size != 3 || np.Config.Labels["team"] != "agents" {
							return fmt.Errorf("size %d, labels %v", size, np.Config.Labels)
						}
						return nil
					}),
					func(*terraform.State) error {
						return l.hit(1, "set size: reset after served", "update: reset before served", "update: 503")
					},
				),
			},
			{
				PreConfig: func() {
					l.inject("import get: reset before served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsGet, Reset: gkeemu.ResetBefore})
					l.inject("import get: 503", &gkeemu.Fault{API: gkeapi.MethodNodePoolsGet, Status: 503})
				},
				ResourceName:      poolAddr,
				ImportState:       true,
				ImportStateVerify: true,
				// The container API does not report a pool's size: an import
				// reads GKE's initialNodeCount (node_pool_model.go), not the
				// size the previous step set.
				ImportStateVerifyIgnore: []string{"node_count"},
			},
			{
				// Destroy through faults: the delete's answer is lost.
				PreConfig: func() {
					l.inject("delete: reset after served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsDelete, Reset: gkeemu.ResetAfter})
					l.inject("addon disable: 503", &gkeemu.Fault{API: gkeapi.MethodClustersUpdate, Status: 503})
				},
				Config: providerConfig(env),
				Check: resource.ComposeTestCheckFunc(
					checkAddon(env, false),
					func(*terraform.State) error {
						if _, ok := env.NodePool(poolID("sandbox")); ok {
							return fmt.Errorf("node pool sandbox still exists")
						}
						return l.hit(1, "delete: reset after served", "addon disable: 503")
					},
				),
			},
			{
				// A fault that outlasts the retries: every attempt of the
				// create is reset before GKE sees it.
				PreConfig: func() {
					l.inject("create: reset before served, always", &gkeemu.Fault{API: gkeapi.MethodNodePoolsCreate, Reset: gkeemu.ResetBefore, Times: -1})
				},
				Config:      testAccNodePoolConfig(env, "sandbox", `  node_count = 1`),
				ExpectError: regexp.MustCompile(`(?s)Connection to the GKE API failed.*nodePools\.create.*after 6 attempts.*connection\s+reset.*terraform\s+apply\s+again:\s+it\s+is\s+safe`),
			},
			{
				PreConfig: func() {
					env.ClearFaults()
					if n := countOps(env, gkeemu.OpCreateNodePool); n != 1 {
						t.Errorf("the failed create made %d more create operations", n-1)
					}
				},
				Config:           testAccNodePoolConfig(env, "sandbox", `  node_count = 1`),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: func(*terraform.State) error {
					if n := countOps(env, gkeemu.OpCreateNodePool); n != 2 {
						return fmt.Errorf("%d create operations in all, want 2 (one per created pool)", n)
					}
					return nil
				},
			},
		},
	})
}

// TestAccGKENodePool_microVMFaults runs a MICROVM pool's lifecycle (create,
// update in place, import, destroy) through the fault kinds of
// TestAccGKE_faults: lost answers (reset after served), resets before a
// request is served, 429 with Retry-After, 503 and slow answers. The pool is
// created once, keeps its sandbox type, and every plan after an apply is
// empty.
func TestAccGKENodePool_microVMFaults(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	l := &faultLog{env: env, faults: map[string]*gkeemu.Fault{}}
	t.Cleanup(func() { l.report(t) })
	microVM := func(body string) string {
		return testAccNodePoolConfig(env, "microvm", "  sandbox_type = \"MICROVM\"\n"+body)
	}
	isMicroVM := func(wantSize int64) resource.TestCheckFunc {
		return checkPool(env, poolAddr, func(np *container.NodePool, size int64) error {
			if sc := np.Config.SandboxConfig; sc == nil || sc.Type != "MICROVM" || size != wantSize {
				return fmt.Errorf("sandbox %+v size %d, want MICROVM with %d nodes", sc, size, wantSize)
			}
			return nil
		})
	}
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			PreConfig: func() {
				l.inject("create: reset after served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsCreate, Reset: gkeemu.ResetAfter})
				l.inject("pool get: reset before served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsGet, Reset: gkeemu.ResetBefore})
				l.inject("operation get: 429 Retry-After", &gkeemu.Fault{API: gkeapi.MethodOperationsGet, Status: 429, RetryAfter: time.Second})
				l.inject("slow: 1.5 s", &gkeemu.Fault{Latency: 1500 * time.Millisecond, Times: 2})
			},
			Config:           microVM(""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: resource.ComposeTestCheckFunc(isMicroVM(1), func(*terraform.State) error {
				if n := countOps(env, gkeemu.OpCreateNodePool); n != 1 {
					return fmt.Errorf("%d create operations, want 1 (the lost answer's create resent)", n)
				}
				// The create's operation is found by listing after the lost
				// answer; the 429 meets the first operations.get, whichever
				// step sends it (checked at the end).
				return l.hit(1, "create: reset after served", "pool get: reset before served")
			}),
		},
		resource.TestStep{
			PreConfig: func() {
				l.inject("set size: reset after served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsSetSize, Reset: gkeemu.ResetAfter})
				l.inject("update: 503", &gkeemu.Fault{API: gkeapi.MethodNodePoolsUpdate, Status: 503})
			},
			Config:           microVM("  node_count = 2\n  labels     = { team = \"agents\" }\n"),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionUpdate),
			Check: resource.ComposeTestCheckFunc(isMicroVM(2), func(*terraform.State) error {
				return l.hit(1, "set size: reset after served", "update: 503")
			}),
		},
		resource.TestStep{
			PreConfig: func() {
				l.inject("import get: 503", &gkeemu.Fault{API: gkeapi.MethodNodePoolsGet, Status: 503})
			},
			ResourceName:            poolAddr,
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"node_count"}, // not reported by the container API
		},
		resource.TestStep{
			PreConfig: func() {
				l.inject("delete: reset after served", &gkeemu.Fault{API: gkeapi.MethodNodePoolsDelete, Reset: gkeemu.ResetAfter})
			},
			Config: providerConfig(env),
			Check: func(*terraform.State) error {
				if _, ok := env.NodePool(poolID("microvm")); ok {
					return fmt.Errorf("node pool microvm still exists")
				}
				return l.hit(1, "delete: reset after served", "import get: 503", "operation get: 429 Retry-After")
			},
		},
	))
}
