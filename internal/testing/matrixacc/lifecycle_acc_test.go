// Package matrixacc_test is the acceptance lifecycle the CLI matrix
// (scripts/testacc-matrix.sh, make testacc-matrix, CI) runs under every
// Terraform and OpenTofu CLI: every resource and data source of the
// provider, except agentsandbox_controller (which the matrix runs last, on
// its own: it changes the cluster-wide CRDs), in ONE configuration (the
// sandbox router in the test's namespace) that is
// created, updated in place, imported resource by resource with
// ImportStateVerify, and destroyed. One configuration pays each CLI's
// start-up once per step instead of once per resource: the family tests
// run the same lifecycles one resource at a time under the CLI on PATH.
package matrixacc_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxclaim"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

// TestMain keeps the provider's HTTP traffic on 127.0.0.1 (the GKE emulator
// and the local control plane) and makes the GKE client poll fast.
func TestMain(m *testing.M) {
	emutest.Isolate()
	emutest.FastGKEClient()
	acctest.Main(m)
}

const (
	poolAddr    = "agentsandbox_gke_node_pool.agents"
	addonAddr   = "agentsandbox_gke_addon.this"
	clusterData = "data.agentsandbox_cluster.this"
	routerAddr  = "agentsandbox_sandbox_router.router"
)

// config is acctest.OneOfEach (the five Kubernetes object resources) plus
// a GKE node pool and the Agent Sandbox add-on on the emulated cluster and
// the cluster data source; stage labels every object and node pool, so
// changing it updates six resources in place (the add-on has nothing to
// update).
func config(env *emutest.Env, ns, stage string) string {
	provider := fmt.Sprintf(`provider %[1]q {
  kubernetes {
    config_path = %[2]s
  }
  gke {
    endpoint     = %[3]q
    access_token = "test"
    project      = %[4]q
    # The emulator speaks plain HTTP on loopback.
    allow_credentials_over_http = true
  }
}
`, acctest.ProviderName, acctest.HCLString(acctest.Kubeconfig()), env.URL, emutest.Project)
	return acctest.OneOfEach(provider, ns, stage, fmt.Sprintf(`
resource "agentsandbox_gke_node_pool" "agents" {
  location = %[1]q
  cluster  = %[2]q
  name     = "agents"
  labels   = { stage = %[3]q }
}

resource "agentsandbox_gke_addon" "this" {
  location = %[1]q
  cluster  = %[2]q
}

data "agentsandbox_cluster" "this" {}

# The sandbox router in the test's namespace; the stage changes its replicas.
resource "agentsandbox_sandbox_router" "router" {
  namespace = %[4]q
  replicas  = %[3]q == "created" ? 1 : 2
}
`, emutest.Location, emutest.Cluster, stage, ns))
}

// TestAccMatrix_lifecycle: create, update in place, import and destroy of
// every resource, with an empty plan after each apply.
func TestAccMatrix_lifecycle(t *testing.T) {
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	env := emutest.Start(t, gkeemu.Options{PendingDuration: 20 * time.Millisecond, RunningDuration: 80 * time.Millisecond}, gkeemu.ClusterSpec{})

	objects := acctest.OneOfEachObjects
	k8s := make([]string, 0, len(objects))
	for addr := range objects {
		k8s = append(k8s, addr)
	}
	sort.Strings(k8s)
	all := append([]string{poolAddr, addonAddr, routerAddr}, k8s...)
	planned := func(action plancheck.ResourceActionType, addrs []string, rest plancheck.ResourceActionType, others []string) resource.ConfigPlanChecks {
		var pre []plancheck.PlanCheck
		for _, a := range addrs {
			pre = append(pre, plancheck.ExpectResourceAction(a, action))
		}
		for _, a := range others {
			pre = append(pre, plancheck.ExpectResourceAction(a, rest))
		}
		return resource.ConfigPlanChecks{PreApply: pre, PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	}
	labelled := func(stage string) []statecheck.StateCheck {
		checks := []statecheck.StateCheck{
			statecheck.ExpectKnownValue(poolAddr, tfjsonpath.New("labels").AtMapKey("stage"), knownvalue.StringExact(stage)),
			statecheck.ExpectKnownValue(clusterData, tfjsonpath.New("server_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.\d+\.\d+`))),
		}
		for _, a := range k8s {
			checks = append(checks, acctest.ExpectObject(a, objects[a], acctest.Field(stage, "metadata", "labels", "test.agentsandbox.dev/stage")))
		}
		return checks
	}

	steps := []resource.TestStep{
		{
			Config:            config(env, ns, "created"),
			ConfigPlanChecks:  planned(plancheck.ResourceActionCreate, all, "", nil),
			ConfigStateChecks: labelled("created"),
			Check:             addonEnabled(env, true),
		},
		{
			Config:            config(env, ns, "updated"),
			ConfigPlanChecks:  planned(plancheck.ResourceActionUpdate, append([]string{poolAddr, routerAddr}, k8s...), plancheck.ResourceActionNoop, []string{addonAddr}),
			ConfigStateChecks: labelled("updated"),
		},
	}
	for _, a := range all {
		step := resource.TestStep{ResourceName: a, ImportState: true, ImportStateVerify: true}
		if a == "agentsandbox_warm_pool.pool" || a == "agentsandbox_sandbox_claim.claim" {
			// Waiting is configuration: an import cannot see it.
			step.ImportStateVerifyIgnore = []string{"timeouts"}
		}
		if a == routerAddr {
			// The applied objects' digests; an import reads the configuration.
			step.ImportStateVerifyIgnore = []string{"inventory"}
		}
		steps = append(steps, step)
	}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             destroyed(env, ns),
		Steps:                    steps,
	})
}

// The configuration's addresses name the families' own resource types and
// API resources (acctest cannot import the families).
func TestOneOfEachNamesTheFamilies(t *testing.T) {
	want := map[string]string{
		sandboxtemplate.ResourceType + ".python": sandboxtemplate.Kind.GVR.String(),
		networkpolicy.ResourceType + ".isolate":  networkpolicy.Kind.GVR.String(),
		warmpool.ResourceType + ".pool":          warmpool.Kind.GVR.String(),
		sandbox.ResourceType + ".solo":           sandbox.Kind.GVR.String(),
		sandboxclaim.ResourceType + ".claim":     sandboxclaim.Kind.GVR.String(),
	}
	if len(acctest.OneOfEachObjects) != len(want) {
		t.Errorf("acctest.OneOfEachObjects has %d resources, want %d", len(acctest.OneOfEachObjects), len(want))
	}
	for addr, gvr := range want {
		if got, ok := acctest.OneOfEachObjects[addr]; !ok || got.String() != gvr {
			t.Errorf("acctest.OneOfEachObjects[%q] = %v, want %s", addr, got, gvr)
		}
	}
}

func addonEnabled(env *emutest.Env, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c, ok := env.Cluster(env.ClusterName)
		if !ok {
			return fmt.Errorf("the emulated cluster is gone")
		}
		if got := gkeapi.AgentSandboxAddonEnabled(c); got != want {
			return fmt.Errorf("Agent Sandbox add-on enabled = %v, want %v", got, want)
		}
		return nil
	}
}

// destroyed: every Kubernetes object is gone (asked of the API server),
// the node pool is gone and the add-on is off (asked of the emulator).
func destroyed(env *emutest.Env, ns string) resource.TestCheckFunc {
	checks := []resource.TestCheckFunc{addonEnabled(env, false), func(*terraform.State) error {
		ref := acctest.ObjectRef{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: ns, Name: "sandbox-router"}
		_, err := acctest.GetObject(context.Background(), ref)
		switch {
		case err == nil:
			return fmt.Errorf("%s still exists after destroy", ref)
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("%s after destroy: %w", ref, err)
		}
		return nil
	}}
	seen := map[string]bool{}
	for addr, gvr := range acctest.OneOfEachObjects {
		typ, _, _ := strings.Cut(addr, ".") // "type.name"
		if !seen[typ] {
			seen[typ] = true
			checks = append(checks, acctest.CheckDestroy(typ, gvr))
		}
	}
	checks = append(checks, func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[poolAddr]
		if !ok {
			return nil
		}
		if np, ok := env.NodePool(rs.Primary.ID); ok {
			return fmt.Errorf("node pool %s still exists (status %s)", rs.Primary.ID, np.Status)
		}
		return nil
	})
	return resource.ComposeAggregateTestCheckFunc(checks...)
}
