package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// upgradeKinds are the agent-sandbox objects a release upgrade must keep.
var upgradeKinds = []schema.GroupVersionResource{
	{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxtemplates"},
	{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxwarmpools"},
	{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxclaims"},
	{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"},
}

// TestAccController_upgradeRealV056ToV103 upgrades a cluster that runs
// upstream's real v0.5.6 controller, with a template, a warm pool, a
// long-lived sandbox and a claim it reconciled, to v1.0.3, and swaps the
// controller binaries as the Deployment's rollout would: the stored
// versions are migrated to v1beta1 only, the conversion webhook's objects
// are pruned, no object of the API is lost or recreated, and the real
// v1.0.3 controller reconciles them afterwards (the pool refills after a
// new claim takes from it).
//
// It runs on a local cluster of its own (the package's shared cluster runs
// the newest release's controller, which must not take part), with the
// releases' own CRDs installed by agentsandbox_controller from the release
// bundles and each release's controller built from the Go module proxy.
func TestAccController_upgradeRealV056ToV103(t *testing.T) {
	// On a cluster of its own: runs beside the package's other tests of
	// their own clusters (the package is otherwise serial).
	t.Parallel()
	c := acctest.StartOwnCluster(t, testenv.Options{
		Profile: &releases.V056,
		// agentsandbox_controller installs the CRDs; the controller
		// starts once they are served, as its pod would.
		NoCRDs:         true,
		Controller:     testenv.RealController(releases.V056, ""),
		ControllerWait: -1,
	})
	dyn := c.Dynamic
	ctx := t.Context()
	rs := newReleaseServer(t)
	const ns = "default"

	config := func(version string, claims ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `
%[1]s
resource "agentsandbox_controller" "test" {
  version          = %[2]q
  release_base_url = %[3]q
}

resource "terraform_data" "namespace" {
  input = %[4]q
}

resource "agentsandbox_sandbox_template" "python" {
  name      = "python"
  namespace = terraform_data.namespace.output
  network_policy_management = "Unmanaged"
  pod_template = {
    containers = [{
      name      = "python"
      image     = "registry.example/python-runtime:1"
      resources = { limits = { cpu = "500m", memory = "256Mi" } }
    }]
  }
  depends_on = [agentsandbox_controller.test]
}

resource "agentsandbox_warm_pool" "python" {
  name      = "python"
  namespace = agentsandbox_sandbox_template.python.namespace
  template  = agentsandbox_sandbox_template.python.name
  replicas  = 2
}

resource "agentsandbox_sandbox" "workspace" {
  name      = "workspace"
  namespace = terraform_data.namespace.output
  service   = true
  pod_template = {
    containers = [{
      name      = "agent"
      image     = "registry.example/agent:1"
      resources = { limits = { cpu = "500m", memory = "256Mi" } }
    }]
  }
  depends_on = [agentsandbox_controller.test]
}
`, c.ProviderConfig(), version, rs.URL, ns)
		for _, claim := range claims {
			fmt.Fprintf(&b, `
resource "agentsandbox_sandbox_claim" %[1]q {
  name      = %[1]q
  namespace = agentsandbox_warm_pool.python.namespace
  warm_pool = agentsandbox_warm_pool.python.name
}
`, claim)
		}
		return b.String()
	}

	// before holds every agent-sandbox object's UID after the v0.5.6
	// world converged; the upgrade must keep each one.
	before := map[string]types.UID{}
	snapshot := func() (map[string]types.UID, error) {
		out := map[string]types.UID{}
		for _, gvr := range upgradeKinds {
			list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
			}
			for _, o := range list.Items {
				out[gvr.Resource+"/"+o.GetName()] = o.GetUID()
			}
		}
		return out, nil
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// v0.5.6 installed; its real controller starts once the
				// CRDs are served, patches its CA into them and serves the
				// conversion webhook; the pool fills and the claim binds.
				Config:           config("v0.5.6", "first"),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						// A v1alpha1 read goes through the release's own
						// webhook, reached through its Service.
						alpha := schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1alpha1", Resource: "sandboxes"}
						if _, err := dyn.Resource(alpha).Namespace(ns).Get(ctx, "workspace", metav1.GetOptions{}); err != nil {
							return fmt.Errorf("reading the sandbox as v1alpha1 through v0.5.6's conversion webhook: %w", err)
						}
						snap, err := snapshot()
						if err != nil {
							return err
						}
						// template, pool, sandbox "workspace", the claim,
						// and the pool's sandboxes (2 warm + 1 adopted).
						if len(snap) < 6 {
							return fmt.Errorf("after the v0.5.6 apply: %d objects %v, want the template, the pool, the claim and at least 3 sandboxes", len(snap), snap)
						}
						// Filled in place: keptAll holds this map.
						for k, uid := range snap {
							before[k] = uid
						}
						t.Logf("v0.5.6 world: %d objects", len(snap))
						return nil
					},
				),
			},
			{
				// The upgrade, then the binaries swapped as the rollout
				// would; the plan after it is empty with v1.0.3 running.
				Config: config("v1.0.3", "first"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						return c.ReplaceController(ctx, testenv.RealController(releases.V103, c.Root))
					},
					func(*terraform.State) error {
						for _, name := range sandboxCRDs {
							crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
							if err != nil {
								return err
							}
							sv, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
							if strings.Join(sv, ",") != "v1beta1" {
								return fmt.Errorf("CRD %s storedVersions %v after the upgrade, want [v1beta1]", name, sv)
							}
							if s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); s != "None" {
								return fmt.Errorf("CRD %s conversion strategy %q after the upgrade, want None", name, s)
							}
						}
						for _, ref := range webhookObjects {
							_, err := dyn.Resource(ref.GVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
							if !apierrors.IsNotFound(err) {
								return fmt.Errorf("%s %s/%s after the upgrade: %w (want it pruned)", ref.GVR.Resource, ref.Namespace, ref.Name, err)
							}
						}
						return nil
					},
					keptAll(t, before, snapshot),
				),
			},
			{
				// v1.0.3's controller reconciles the objects v0.5.6 made: a
				// new claim takes a warm sandbox and the pool refills to 2.
				Config:           config("v1.0.3", "first", "second"),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					keptAll(t, before, snapshot),
					func(*terraform.State) error {
						return waitFor(ctx, 2*time.Minute, func() error {
							pool, err := dyn.Resource(upgradeKinds[1]).Namespace(ns).Get(ctx, "python", metav1.GetOptions{})
							if err != nil {
								return err
							}
							ready, _, _ := unstructured.NestedInt64(pool.Object, "status", "readyReplicas")
							if ready != 2 {
								return fmt.Errorf("warm pool python has %d ready sandboxes under v1.0.3's controller, want 2", ready)
							}
							return nil
						})
					},
				),
			},
		},
	})
}

// keptAll checks that every object of before still exists with its UID.
func keptAll(t *testing.T, before map[string]types.UID, snapshot func() (map[string]types.UID, error)) resource.TestCheckFunc {
	return func(*terraform.State) error {
		now, err := snapshot()
		if err != nil {
			return err
		}
		if len(before) == 0 {
			return fmt.Errorf("no objects recorded before the upgrade: nothing would be checked")
		}
		var lost []string
		for k, uid := range before {
			if now[k] != uid {
				lost = append(lost, fmt.Sprintf("%s (uid %s, now %q)", k, uid, now[k]))
			}
		}
		if len(lost) > 0 {
			return fmt.Errorf("%d of %d objects lost or recreated by the upgrade: %s", len(lost), len(before), strings.Join(lost, "; "))
		}
		t.Logf("all %d objects of the v0.5.6 world kept (%d now)", len(before), len(now))
		return nil
	}
}

// waitFor retries check until it passes or timeout.
func waitFor(ctx context.Context, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
