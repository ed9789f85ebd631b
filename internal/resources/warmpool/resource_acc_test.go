package warmpool_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_warm_pool"}, DataSources: []string{"agentsandbox_warm_pool"},
		Sources: []string{"."},
		Exempt: map[string]string{"Sandbox template not found": "TestAccWarmPool_templateNotFound: the plan looks the " +
			"template up in the cluster, so only an acceptance test reaches it"}}.Check)
}

var fam = acctest.Family{ResourceType: warmpool.ResourceType, GVR: warmpool.Kind.GVR}

const address = warmpool.ResourceType + ".test"

var gvr = warmpool.Kind.GVR

// templateSpec is the spec of a SandboxTemplate made through the API for a
// pool to use (the template resource is another family's). podSpec extends
// the default pod spec, e.g. with a nodeSelector no node matches.
func templateSpec(podSpec map[string]any) map[string]any {
	spec := map[string]any{
		"containers": []any{map[string]any{
			"name": "python", "image": "registry.example/python-runtime:1",
			"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}},
		}},
	}
	for k, v := range podSpec {
		spec[k] = v
	}
	return map[string]any{
		"networkPolicyManagement": "Unmanaged",
		"podTemplate":             map[string]any{"spec": spec},
	}
}

func poolConfig(name, ns, body string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_warm_pool" "test" {
  name      = %[1]q
  namespace = %[2]q
%[3]s
}
`, name, ns, body))
}

// liveSpec checks the pool's spec as stored.
func liveSpec(template string, replicas int64, strategy string) func(*unstructured.Unstructured) error {
	return func(u *unstructured.Unstructured) error {
		gotT, _, _ := unstructured.NestedString(u.Object, "spec", "sandboxTemplateRef", "name")
		gotR, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		gotS, _, _ := unstructured.NestedString(u.Object, "spec", "updateStrategy", "type")
		if gotT != template || gotR != replicas || gotS != strategy {
			return fmt.Errorf("spec = template %q, replicas %d, strategy %q; want %q, %d, %q", gotT, gotR, gotS, template, replicas, strategy)
		}
		return nil
	}
}

// readySandboxes checks, independently of the provider and of the pool's
// own status, that exactly n sandboxes of the pool exist and are Ready.
func readySandboxes(t *testing.T, address string, n int) statecheck.StateCheck {
	return acctest.ExpectObject(address, gvr, func(pool *unstructured.Unstructured) error {
		list, err := listSandboxes(t, pool.GetNamespace(), sandboxapi.WarmPoolSelector(pool.GetName()))
		if err != nil {
			return err
		}
		ready := 0
		for _, sb := range list {
			conds, _, _ := unstructured.NestedSlice(sb.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
					ready++
				}
			}
		}
		if len(list) != n || ready != n {
			return fmt.Errorf("the pool has %d sandboxes, %d ready; want %d ready", len(list), ready, n)
		}
		return nil
	})
}

func listSandboxes(t *testing.T, ns, selector string) ([]unstructured.Unstructured, error) {
	l, err := acctest.Dynamic(t).Resource(sandboxapi.SandboxGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []unstructured.Unstructured
	for _, sb := range l.Items {
		if sb.GetDeletionTimestamp() == nil {
			out = append(out, sb)
		}
	}
	return out, nil
}

// TestAccWarmPool_basic: a pool of 5 is 5/5 ready when the apply returns.
func TestAccWarmPool_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("pool")
	var t0 time.Time
	resource.Test(t, fam.Case(t, resource.TestStep{
		PreConfig: func() { t0 = time.Now() },
		Config: poolConfig(name, ns, `  template = "python"
  replicas = 5`),
		Check: func(*terraform.State) error {
			t.Logf("plan + apply of a pool of 5 until 5/5 ready: %s", time.Since(t0).Round(time.Millisecond))
			return nil
		},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(5)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("ready_replicas"), knownvalue.Int64Exact(5)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("update_strategy"), knownvalue.StringExact("OnReplenish")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("wait_for_ready"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("replicas_managed_externally"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("selector"), knownvalue.StringExact(sandboxapi.WarmPoolSelector(name))),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("labels"), knownvalue.Null()),
			readySandboxes(t, address, 5),
			acctest.ExpectObject(address, gvr, liveSpec("python", 5, "OnReplenish"),
				// The defaults are sent explicitly: they are the provider's, so
				// a change by anyone else is drift the next apply repairs.
				acctest.OwnedBy("agentsandbox", ".spec.replicas", ".spec.sandboxTemplateRef.name", ".spec.updateStrategy.type")),
		},
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				// Known while planning: an autoscaler or a policy can use it.
				plancheck.ExpectKnownValue(address, tfjsonpath.New("selector"), knownvalue.StringExact(sandboxapi.WarmPoolSelector(name))),
				plancheck.ExpectUnknownValue(address, tfjsonpath.New("ready_replicas")),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
	}, resource.TestStep{
		// A refresh alone changes nothing either.
		RefreshState: true,
		RefreshPlanChecks: resource.RefreshPlanChecks{
			PostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
	}))
}

// TestAccWarmPool_defaults: nothing but a template plans the API's
// defaults, visibly, and reads them back without a diff.
func TestAccWarmPool_defaults(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("pool")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: poolConfig(name, ns, `  template = "python"`),
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(1)),
				plancheck.ExpectKnownValue(address, tfjsonpath.New("update_strategy"), knownvalue.StringExact("OnReplenish")),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("ready_replicas"), knownvalue.Int64Exact(1)),
			acctest.ExpectObject(address, gvr, liveSpec("python", 1, "OnReplenish")),
		},
	}))
}

// TestAccWarmPool_update scales in place to 8 and to 0, switches template
// and strategy, and changes labels, each an in-place update that ends
// with the pool ready.
func TestAccWarmPool_update(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	acctest.CreateTemplate(t, ns, "node", templateSpec(nil))
	name := acctest.RandomName("pool")
	step := func(body string, replicas int64, template, strategy string, checks ...statecheck.StateCheck) resource.TestStep {
		return resource.TestStep{
			Config:           poolConfig(name, ns, body),
			ConfigPlanChecks: acctest.PlannedAt(address, plancheck.ResourceActionUpdate),
			ConfigStateChecks: append([]statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(replicas)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready_replicas"), knownvalue.Int64Exact(replicas)),
				acctest.ExpectObject(address, gvr, liveSpec(template, replicas, strategy)),
				readySandboxes(t, address, int(replicas)),
			}, checks...),
		}
	}
	first := step(`  template = "python"
  replicas = 5
  labels   = { team = "a" }`, 5, "python", "OnReplenish")
	first.ConfigPlanChecks = acctest.EmptyPlanAfterApply
	resource.Test(t, fam.Case(t,
		first,
		step(`  template = "python"
  replicas = 8
  labels   = { team = "a" }`, 8, "python", "OnReplenish"),
		step(`  template = "python"
  replicas = 0
  labels   = { team = "a" }`, 0, "python", "OnReplenish"),
		step(`  template        = "node"
  replicas        = 2
  update_strategy = "Recreate"
  labels          = { team = "b", tier = "gold" }
  annotations     = { "example.com/owner" = "platform" }`, 2, "node", "Recreate",
			statecheck.ExpectKnownValue(address, tfjsonpath.New("labels"), knownvalue.MapExact(map[string]knownvalue.Check{
				"team": knownvalue.StringExact("b"), "tier": knownvalue.StringExact("gold"),
			})),
			// Recreate: the sandboxes of the old template were replaced.
			acctest.ExpectObject(address, gvr, func(pool *unstructured.Unstructured) error {
				list, err := listSandboxes(t, ns, sandboxapi.WarmPoolSelector(name))
				if err != nil {
					return err
				}
				for _, sb := range list {
					if sb.GetLabels()[agentsv1beta1.SandboxTemplateRefHashLabel] != sandboxapi.NameHash("node") {
						return fmt.Errorf("sandbox %s is still from another template", sb.GetName())
					}
				}
				return nil
			})),
		// Unsetting labels removes them from the object.
		step(`  template        = "node"
  replicas        = 2
  update_strategy = "Recreate"`, 2, "node", "Recreate",
			statecheck.ExpectKnownValue(address, tfjsonpath.New("labels"), knownvalue.Null()),
			acctest.ExpectObject(address, gvr, func(u *unstructured.Unstructured) error {
				if _, ok := u.GetLabels()["team"]; ok {
					return fmt.Errorf("label team is still there: %v", u.GetLabels())
				}
				return nil
			})),
	))
}

// TestAccWarmPool_replace: name and namespace identify the object, so
// changing them replaces it.
func TestAccWarmPool_replace(t *testing.T) {
	ns := acctest.Namespace(t)
	ns2 := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	acctest.CreateTemplate(t, ns2, "python", templateSpec(nil))
	name := acctest.RandomName("pool")
	replace := fam.Planned(plancheck.ResourceActionDestroyBeforeCreate)
	body := `  template = "python"
  replicas = 2`
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: poolConfig(name, ns, body), ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			Config:            poolConfig(name+"-b", ns, body),
			ConfigPlanChecks:  replace,
			ConfigStateChecks: []statecheck.StateCheck{readySandboxes(t, address, 2)},
			Check: func(*terraform.State) error {
				_, err := acctest.GetObject(context.Background(), acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name})
				if err == nil {
					return fmt.Errorf("the old pool %s/%s still exists", ns, name)
				}
				return nil
			},
		},
		resource.TestStep{
			Config:            poolConfig(name+"-b", ns2, body),
			ConfigPlanChecks:  replace,
			ConfigStateChecks: []statecheck.StateCheck{readySandboxes(t, address, 2)},
		},
	))
}

func TestAccWarmPool_import(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("pool")
	cfg := poolConfig(name, ns, `  template        = "python"
  replicas        = 3
  update_strategy = "Recreate"
  labels          = { team = "a" }
  annotations     = { "example.com/owner" = "platform" }`)
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			Config:            cfg,
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true,
			// The timeouts block exists only in the configuration.
			ImportStateVerifyIgnore: []string{"timeouts"},
		},
		resource.TestStep{
			// An import needs no further change.
			Config:       cfg,
			ResourceName: address,
			ImportState:  true,
			ImportStateCheck: func(states []*terraform.InstanceState) error {
				if len(states) != 1 || states[0].Attributes["ready_replicas"] != "3" || states[0].Attributes["template"] != "python" {
					return fmt.Errorf("imported %v", states)
				}
				return nil
			},
		},
		resource.TestStep{
			Config:        cfg,
			ResourceName:  address,
			ImportState:   true,
			ImportStateId: ns + "/no-such-pool",
			// The provider's own message (kind, namespace, name, what to check),
			// not Terraform's advice about regions and endpoints.
			ExpectError: regexp.MustCompile(`SandboxWarmPool ` + regexp.QuoteMeta(ns) + `/no-such-pool not found`),
		},
		resource.TestStep{
			Config:        cfg,
			ResourceName:  address,
			ImportState:   true,
			ImportStateId: "a/b/c",
			ExpectError:   regexp.MustCompile(`not of the form <namespace>/<name>`),
		},
	))
}

func TestAccWarmPool_disappears(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("gone")
	cfg := poolConfig(name, ns, `  template = "python"
  replicas = 2`)
	// Deleted out of band: the plan creates it again.
	resource.Test(t, fam.Case(t, fam.Disappears(cfg, readySandboxes(t, address, 2))...))
}

// expectPlannedChange checks that the plan changes attribute from the
// refreshed value before (the out-of-band edit, now visible) to after.
func expectPlannedChange(address, attribute string, before, after any) plancheck.PlanCheck {
	return planChange{address, attribute, before, after}
}

type planChange struct {
	address, attribute string
	before, after      any
}

func (c planChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		b, _ := rc.Change.Before.(map[string]any)
		a, _ := rc.Change.After.(map[string]any)
		if fmt.Sprint(b[c.attribute]) != fmt.Sprint(c.before) || fmt.Sprint(a[c.attribute]) != fmt.Sprint(c.after) {
			resp.Error = fmt.Errorf("%s.%s: planned %v -> %v, want %v -> %v", c.address, c.attribute, b[c.attribute], a[c.attribute], c.before, c.after)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// expectOnlyChanges checks that the plan changes nothing but the named
// attributes (and the computed status that any update re-reads).
func expectOnlyChanges(address string, attributes ...string) plancheck.PlanCheck {
	return onlyChanges{address, attributes}
}

type onlyChanges struct {
	address    string
	attributes []string
}

func (c onlyChanges) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		b, _ := rc.Change.Before.(map[string]any)
		a, _ := rc.Change.After.(map[string]any)
		unknown, _ := rc.Change.AfterUnknown.(map[string]any)
		var changed []string
		for k, v := range b {
			if unknown[k] == true {
				continue
			}
			if fmt.Sprint(v) != fmt.Sprint(a[k]) {
				changed = append(changed, k)
			}
		}
		slices.Sort(changed)
		want := slices.Clone(c.attributes)
		slices.Sort(want)
		if !slices.Equal(changed, want) {
			resp.Error = fmt.Errorf("%s: the plan changes %v, want exactly %v", c.address, changed, want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// TestAccWarmPool_drift: edits made behind Terraform's back show in the
// plan as exactly those edits, and the apply puts them back.
func TestAccWarmPool_drift(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	acctest.CreateTemplate(t, ns, "other", templateSpec(nil))
	name := acctest.RandomName("drift")
	ref := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}
	cfg := poolConfig(name, ns, `  template = "python"
  replicas = 3
  labels   = { team = "a" }`)
	back := []statecheck.StateCheck{
		acctest.ExpectObject(address, gvr, liveSpec("python", 3, "OnReplenish"), acctest.OwnedBy("agentsandbox", ".spec.replicas")),
		readySandboxes(t, address, 3),
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			// kubectl scale --replicas=6: through the scale subresource, as an
			// autoscaler would. Without replicas_managed_externally the count
			// is the configuration's, so this is drift.
			PreConfig: func() { scale(t, ns, name, 6) },
			Config:    cfg,
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate,
				expectPlannedChange(address, "replicas", 6, 3),
				expectOnlyChanges(address, "replicas"),
			),
			ConfigStateChecks: back,
		},
		resource.TestStep{
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"spec":{"sandboxTemplateRef":{"name":"other"},"updateStrategy":{"type":"Recreate"}}}`)
			},
			Config: cfg,
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate,
				expectPlannedChange(address, "template", "other", "python"),
				expectPlannedChange(address, "update_strategy", "Recreate", "OnReplenish"),
				expectOnlyChanges(address, "template", "update_strategy"),
			),
			ConfigStateChecks: back,
		},
		resource.TestStep{
			// A managed label changed, another added by someone else: only
			// the managed one is drift.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"metadata":{"labels":{"team":"changed","added-by-someone":"x"}}}`)
			},
			Config: cfg,
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate,
				expectPlannedChange(address, "labels", map[string]any{"team": "changed"}, map[string]any{"team": "a"}),
				expectOnlyChanges(address, "labels"),
			),
			ConfigStateChecks: append(back, acctest.ExpectObject(address, gvr, func(u *unstructured.Unstructured) error {
				if l := u.GetLabels(); l["team"] != "a" || l["added-by-someone"] != "x" {
					return fmt.Errorf("labels = %v", l)
				}
				return nil
			})),
		},
	))
}

// scale sets the pool's replicas through the scale subresource, as
// `kubectl scale` or a HorizontalPodAutoscaler does.
func scale(t *testing.T, ns, name string, replicas int) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	_, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Patch(t.Context(), name, k8stypes.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "test-autoscaler"}, "scale")
	if err != nil {
		t.Fatalf("scaling %s/%s to %d: %v", ns, name, replicas, err)
	}
}

// TestAccWarmPool_replicasManagedExternally: with an autoscaler owning the
// count, its scaling never shows in a plan, the switch keeps the current
// count, and other updates leave the count alone.
func TestAccWarmPool_replicasManagedExternally(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("hpa")
	managed := poolConfig(name, ns, `  template = "python"
  replicas = 3`)
	external := func(extra string) string {
		return poolConfig(name, ns, `  template                    = "python"
  replicas_managed_externally = true`+extra)
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: managed, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			// The hand-over: the count stays 3, not the API's default of 1.
			Config:           external(""),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(3)),
				acctest.ExpectObject(address, gvr, liveSpec("python", 3, "OnReplenish"), acctest.NotOwnedBy("agentsandbox", ".spec.replicas")),
				readySandboxes(t, address, 3),
			},
		},
		resource.TestStep{
			// The autoscaler scales: nothing to plan, and refresh reports it.
			PreConfig: func() { scale(t, ns, name, 5) },
			Config:    external(""),
			PlanOnly:  true,
		},
		resource.TestStep{
			RefreshState: true,
			RefreshPlanChecks: resource.RefreshPlanChecks{
				PostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.TestCheckResourceAttr(address, "replicas", "5"),
		},
		resource.TestStep{
			// Another change applies without touching the count, and waits
			// for the autoscaler's 5.
			Config:           external("\n  labels = { team = \"a\" }"),
			ConfigPlanChecks: acctest.PlannedAt(address, plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(5)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready_replicas"), knownvalue.Int64Exact(5)),
				acctest.ExpectObject(address, gvr, liveSpec("python", 5, "OnReplenish"), acctest.NotOwnedBy("agentsandbox", ".spec.replicas")),
				readySandboxes(t, address, 5),
			},
		},
		resource.TestStep{
			// Taking the count back is an ordinary change of replicas.
			Config: managed,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(address, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(3)),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.ExpectObject(address, gvr, liveSpec("python", 3, "OnReplenish"), acctest.OwnedBy("agentsandbox", ".spec.replicas")),
				readySandboxes(t, address, 3),
			},
		},
	))
}

// TestAccWarmPool_externalFromTheStart: a new pool under an autoscaler
// starts at the API's default and never owns the count.
func TestAccWarmPool_externalFromTheStart(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("hpa")
	cfg := poolConfig(name, ns, `  template                    = "python"
  replicas_managed_externally = true`)
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectUnknownValue(address, tfjsonpath.New("replicas"))},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("replicas"), knownvalue.Int64Exact(1)),
				acctest.ExpectObject(address, gvr, acctest.NotOwnedBy("agentsandbox", ".spec.replicas")),
			},
		},
		resource.TestStep{
			PreConfig: func() { scale(t, ns, name, 4) },
			Config:    cfg,
			PlanOnly:  true,
		},
	))
}

// TestAccWarmPool_templateNotFound: the pool is refused, naming the
// template, before anything is written.
func TestAccWarmPool_templateNotFound(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("orphan")
	resource.Test(t, fam.Case(t, resource.TestStep{
		PreConfig: kube.ResetRequestCounts,
		Config: poolConfig(name, ns, `  template = "no-such-template"
  replicas = 2`),
		ExpectError: regexp.MustCompile(`(?s)Sandbox template not found.*template = "no-such-template".*no SandboxTemplate\s+"no-such-template" in namespace`),
	}, resource.TestStep{
		PreConfig: func() {
			if n := writes(); n != 0 {
				t.Errorf("a pool with a missing template sent %d write requests: %v", n, kube.RequestCounts())
			}
			if _, err := acctest.GetObject(context.Background(), acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}); err == nil {
				t.Error("the pool was created")
			}
		},
		Config:   acctest.Config(""),
		PlanOnly: true,
	}))
}

// writes counts the write requests (anything but GET, LIST and WATCH)
// sent since the counters were last reset.
func writes() int64 {
	var n int64
	for k, v := range kube.RequestCounts() {
		if !strings.HasPrefix(k, "GET ") && !strings.HasPrefix(k, "WATCH ") {
			n += v
		}
	}
	return n
}

// TestAccWarmPool_timeout: sandboxes that never become ready (no node
// matches their nodeSelector) make the apply fail when the timeout
// expires, naming each sandbox and its Ready condition.
func TestAccWarmPool_timeout(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "unschedulable", templateSpec(map[string]any{"nodeSelector": map[string]any{"example.com/no-such-node": "true"}}))
	name := acctest.RandomName("stuck")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: poolConfig(name, ns, `  template = "unschedulable"
  replicas = 2
  timeouts {
    create = "4s"
  }`),
		ExpectError: regexp.MustCompile(`(?s)Warm pool not ready.*0 of 2 sandboxes ready.*Sandboxes of the pool that are not ready:.*Sandbox\s+"` +
			regexp.QuoteMeta(ns) + `/` + regexp.QuoteMeta(name) + `-[a-z0-9]+":\s+Ready=False\s+\(DependenciesNotReady\):\s+Pod\s+exists\s+with\s+phase:\s+Pending;\s+PodScheduled=False\s+\(Unschedulable\).*timeouts`),
	}))
}

// TestAccWarmPool_badInput runs bad configurations through the terraform
// CLI: each fails at plan, quoting the bad value (Terraform 1.11 points
// some errors at the resource's line, so the value is what tells the
// user), and no request reaches the cluster. The exact attribute paths are
// checked in TestBadInputFailsAtPlanWithItsPath.
func TestAccWarmPool_badInput(t *testing.T) {
	var cases []acctest.BadConfig
	for _, tc := range []struct{ body, want string }{
		{`name = "Bad_Name"` + "\n  template = \"python\"", `(?s)Invalid name.*"Bad_Name"`},
		{`name = "pool"` + "\n  template = \"python\"\n  replicas = -1", `(?s)replicas.*at least 0.*-1|(?s)-1.*replicas`},
		{`name = "pool"` + "\n  template = \"python\"\n  update_strategy = \"Rolling\"", `(?s)"Rolling"`},
		{`name = "pool"` + "\n  template = \"python\"\n  replicas = 2\n  replicas_managed_externally = true", `(?s)Replicas set while managed externally.*replicas = 2`},
		{`name = "pool"` + "\n  template = \"python\"\n  labels = { \"agents.x-k8s.io/pool\" = \"x\" }", `(?s)Reserved label key.*"agents.x-k8s.io/pool"`},
	} {
		cases = append(cases, acctest.BadConfig{Config: acctest.Config("resource \"agentsandbox_warm_pool\" \"test\" {\n  " + tc.body + "\n}\n"), Error: tc.want})
	}
	resource.Test(t, fam.Case(t, acctest.RefusedAtPlan(t, cases...)...))
}

// TestAccWarmPool_requestCost measures what the provider sends for n
// pools. A no-change refresh must cost exactly one GET per pool (no
// discovery, no LIST, no watch); the other operations are logged.
func TestAccWarmPool_requestCost(t *testing.T) {
	const n = 10
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec(nil))
	name := acctest.RandomName("cost")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_warm_pool" "test" {
  count     = %[3]d
  name      = "%[1]s-${count.index}"
  namespace = %[2]q
  template  = "python"
  replicas  = 2
}
`, name, ns, n))
	cost := acctest.NewRequestCost(t, n, "pools")
	tc := fam.Case(t, append([]resource.TestStep{
		cost.CreateStep(cfg, "create (plan + apply, waiting for 2/2 ready each)"),
		cost.RefreshStep("GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxwarmpools/{name}", 0),
	}, cost.PlanSteps(cfg)...)...)
	tc = cost.MeasureDestroy(tc, "destroy (refresh + foreground delete, waiting until gone)")
	resource.Test(t, tc)
}

// TestAccWarmPool_examplePlans plans the documentation's example (with the
// template example it refers to) against the provider, so the registry page
// never shows a configuration the schema or its validation refuses. The
// HorizontalPodAutoscaler belongs to another provider, which is not
// installed here, and is left out.
func TestAccWarmPool_examplePlans(t *testing.T) {
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config:             acctest.Config(acctest.ExampleConfig(t, "agentsandbox_sandbox_template", "agentsandbox_warm_pool")),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}))
}
