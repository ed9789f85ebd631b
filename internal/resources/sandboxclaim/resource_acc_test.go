package sandboxclaim_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"

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
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxclaim"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_sandbox_claim"}, DataSources: []string{"agentsandbox_sandbox_claim"},
		Delegated: []pt.Delegation{{Attributes: map[string]any{"volume_claim_templates": blueprint.VolumeClaimTemplatesAttribute("")}, By: "internal/resources/sandbox"}},
		Sources:   []string{"."},
		Exempt: map[string]string{"Pod label domain not allowed by the controller": "../controller.TestAccController_claimLabelDomains: " +
			"the check reads the installed controller's --allowed-label-domains, so it needs a cluster with the controller applied"}}.Check)
}

var fam = acctest.Family{ResourceType: sandboxclaim.ResourceType, GVR: sandboxclaim.Kind.GVR}

const address = sandboxclaim.ResourceType + ".test"

var gvr = sandboxclaim.Kind.GVR

// createTemplate makes a SandboxTemplate directly through the API (the
// template resource is another package's). envPolicy is its
// envVarsInjectionPolicy ("" for the API's default, Disallowed).
func createTemplate(t *testing.T, ns, name, envPolicy string) {
	t.Helper()
	spec := map[string]any{
		"networkPolicyManagement": "Unmanaged",
		"podTemplate": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "python-runtime"}},
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "python", "image": "registry.example/python-runtime:1",
				"env":       []any{map[string]any{"name": "FROM_TEMPLATE", "value": "1"}},
				"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}},
			}}},
		},
	}
	if envPolicy != "" {
		spec["envVarsInjectionPolicy"] = envPolicy
	}
	acctest.CreateTemplate(t, ns, name, spec)
}

// pools are two warm pools of the template "python", which claims take from.
func pools(ns string) string {
	return fmt.Sprintf(`
resource "agentsandbox_warm_pool" "a" {
  name      = "pool-a"
  namespace = %[1]q
  template  = "python"
  replicas  = 2
}

resource "agentsandbox_warm_pool" "b" {
  name      = "pool-b"
  namespace = %[1]q
  template  = "python"
  replicas  = 1
}
`, ns)
}

func claimConfig(ns, name, body string) string {
	return acctest.Config(pools(ns) + fmt.Sprintf(`
resource "agentsandbox_sandbox_claim" "test" {
  name      = %[1]q
  namespace = %[2]q
%[3]s
}
`, name, ns, body))
}

// sandboxOf checks the Sandbox the claim holds, read from the cluster.
func sandboxOf(t *testing.T, check func(claim, sandbox *unstructured.Unstructured) error) statecheck.StateCheck {
	return acctest.ExpectObject(address, gvr, func(claim *unstructured.Unstructured) error {
		name, _, _ := unstructured.NestedString(claim.Object, "status", "sandbox", "name")
		if name == "" {
			return fmt.Errorf("the claim holds no sandbox")
		}
		sb, err := acctest.Dynamic(t).Resource(sandboxapi.SandboxGVR).Namespace(claim.GetNamespace()).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return check(claim, sb)
	})
}

// warmFrom checks that the claim's sandbox was adopted from pool.
func warmFrom(pool string) func(claim, sb *unstructured.Unstructured) error {
	return func(claim, sb *unstructured.Unstructured) error {
		if !strings.HasPrefix(sb.GetName(), pool+"-") || sb.GetLabels()[agentsv1beta1.SandboxLaunchTypeLabel] != agentsv1beta1.SandboxLaunchTypeWarm {
			return fmt.Errorf("sandbox %s (launch type %q) was not taken warm from %s", sb.GetName(), sb.GetLabels()[agentsv1beta1.SandboxLaunchTypeLabel], pool)
		}
		if sb.GetLabels()[extv1beta1.SandboxIDLabel] != string(claim.GetUID()) {
			return fmt.Errorf("sandbox %s belongs to claim %q", sb.GetName(), sb.GetLabels()[extv1beta1.SandboxIDLabel])
		}
		return nil
	}
}

func podLabels(want map[string]string, gone ...string) func(claim, sb *unstructured.Unstructured) error {
	return func(_, sb *unstructured.Unstructured) error {
		got, _, _ := unstructured.NestedStringMap(sb.Object, "spec", "podTemplate", "metadata", "labels")
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("pod label %s = %q, want %q (labels %v)", k, got[k], v, got)
			}
		}
		for _, k := range gone {
			if _, ok := got[k]; ok {
				return fmt.Errorf("pod label %s is still there", k)
			}
		}
		return nil
	}
}

// captured remembers a state value across steps.
type captured struct{ v string }

func (c *captured) set() knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error { c.v = s; return nil })
}

func (c *captured) same() knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error {
		if s != c.v {
			return fmt.Errorf("got %q, want the earlier %q", s, c.v)
		}
		return nil
	})
}

func (c *captured) differs() knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error {
		if s == c.v || s == "" {
			return fmt.Errorf("got %q, want a new value (earlier %q)", s, c.v)
		}
		return nil
	})
}

// TestAccSandboxClaim_basic: the claim is given a warm sandbox from the
// pool, and reports its name and pod IPs once the apply returns.
func TestAccSandboxClaim_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "")
	name := acctest.RandomName("session")
	cfg := claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name`)
	var t0 time.Time
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			// The pools first, so that the claim's timing is its own.
			Config: acctest.Config(pools(ns)),
		},
		resource.TestStep{
			PreConfig: func() { t0 = time.Now() },
			Config:    cfg,
			Check: func(*terraform.State) error {
				t.Logf("plan + apply of a claim until its warm sandbox is ready: %s", time.Since(t0).Round(time.Millisecond))
				return nil
			},
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_policy"), knownvalue.StringExact("Retain")),
					plancheck.ExpectUnknownValue(address, tfjsonpath.New("sandbox_name")),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("warm_pool"), knownvalue.StringExact("pool-a")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), knownvalue.StringRegexp(regexp.MustCompile(`^pool-a-[a-z0-9]+$`))),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_ips"), knownvalue.ListSizeExact(1)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_ips").AtSliceIndex(0), knownvalue.StringRegexp(regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`))),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("env"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("additional_pod_metadata"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_time"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("wait_for_ready"), knownvalue.Bool(true)),
				sandboxOf(t, warmFrom("pool-a")),
			},
		},
		resource.TestStep{
			RefreshState: true,
			RefreshPlanChecks: resource.RefreshPlanChecks{
				PostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
	))
}

// TestAccSandboxClaim_update changes the lifecycle and the pod metadata in
// place: the claim keeps its sandbox, whose pod gets the new labels.
func TestAccSandboxClaim_update(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "")
	name := acctest.RandomName("session")
	var sandbox captured
	future := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	sameSandbox := []statecheck.StateCheck{
		statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.same()),
		statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
	}
	inPlace := fam.Planned(plancheck.ResourceActionUpdate,
		// The sandbox is kept, so its name is known while planning.
		plancheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.same()))
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name`),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.set()),
			},
		},
		resource.TestStep{
			// Another time zone's spelling is kept as written.
			Config: claimConfig(ns, name, fmt.Sprintf(`  warm_pool                  = agentsandbox_warm_pool.a.name
  shutdown_time              = %q
  ttl_seconds_after_finished = 0
  shutdown_policy            = "DeleteForeground"
  labels                     = { team = "a" }
  additional_pod_metadata = {
    labels      = { "sandbox.users.io/session" = "s1" }
    annotations = { "example.com/agent" = "gemini" }
  }`, future.In(time.FixedZone("", 2*3600)).Format(time.RFC3339))),
			ConfigPlanChecks: inPlace,
			ConfigStateChecks: append(slices.Clone(sameSandbox),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_time"), knownvalue.StringExact(future.In(time.FixedZone("", 2*3600)).Format(time.RFC3339))),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ttl_seconds_after_finished"), knownvalue.Int64Exact(0)),
				sandboxOf(t, podLabels(map[string]string{"sandbox.users.io/session": "s1", "app.kubernetes.io/name": "python-runtime"})),
				acctest.ExpectObject(address, gvr, func(u *unstructured.Unstructured) error {
					if p, _, _ := unstructured.NestedString(u.Object, "spec", "lifecycle", "shutdownPolicy"); p != "DeleteForeground" {
						return fmt.Errorf("shutdownPolicy = %q", p)
					}
					return nil
				}),
			),
		},
		resource.TestStep{
			Config: claimConfig(ns, name, fmt.Sprintf(`  warm_pool     = agentsandbox_warm_pool.a.name
  shutdown_time = %q
  additional_pod_metadata = {
    labels = { "sandbox.users.io/session" = "s2" }
  }`, future.Add(time.Hour).Format(time.RFC3339))),
			ConfigPlanChecks: inPlace,
			ConfigStateChecks: append(slices.Clone(sameSandbox),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ttl_seconds_after_finished"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_policy"), knownvalue.StringExact("Retain")),
				sandboxOf(t, podLabels(map[string]string{"sandbox.users.io/session": "s2"})),
			),
		},
		resource.TestStep{
			// Removing the attributes removes the fields.
			Config:           claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name`),
			ConfigPlanChecks: inPlace,
			ConfigStateChecks: append(slices.Clone(sameSandbox),
				sandboxOf(t, podLabels(nil, "sandbox.users.io/session")),
				acctest.ExpectObject(address, gvr, func(u *unstructured.Unstructured) error {
					lc, _, _ := unstructured.NestedMap(u.Object, "spec", "lifecycle")
					if _, ok := lc["shutdownTime"]; ok {
						return fmt.Errorf("shutdownTime is still set: %v", lc)
					}
					if _, ok := lc["ttlSecondsAfterFinished"]; ok {
						return fmt.Errorf("ttlSecondsAfterFinished is still set: %v", lc)
					}
					if u.GetLabels()["team"] != "" {
						return fmt.Errorf("label team is still set")
					}
					return nil
				}),
			),
		},
	))
}

// TestAccSandboxClaim_replace: a new pool, new variables or a new name
// mean a new claim, with a new sandbox.
func TestAccSandboxClaim_replace(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "Allowed")
	name := acctest.RandomName("session")
	var sandbox captured
	replaced := func(pool string) []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.differs()),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.set()),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("warm_pool"), knownvalue.StringExact(pool)),
		}
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:            claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name`),
			ConfigPlanChecks:  acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.set())},
		},
		resource.TestStep{
			Config:            claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.b.name`),
			ConfigPlanChecks:  fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			ConfigStateChecks: append(replaced("pool-b"), sandboxOf(t, warmFrom("pool-b"))),
		},
		resource.TestStep{
			// Variables: a cold start, the sandbox named like the claim.
			Config: claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.b.name
  env = [{ name = "SESSION", value = "s1" }]`),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			ConfigStateChecks: append(replaced("pool-b"),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), knownvalue.StringExact(name)),
				sandboxOf(t, coldWithEnv(map[string]string{"SESSION": "s1", "FROM_TEMPLATE": "1"}))),
		},
		resource.TestStep{
			Config: claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.b.name
  env = [{ name = "SESSION", value = "s2", container_name = "python" }]`),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			ConfigStateChecks: []statecheck.StateCheck{
				sandboxOf(t, coldWithEnv(map[string]string{"SESSION": "s2"})),
			},
		},
		resource.TestStep{
			Config: claimConfig(ns, name+"-2", `  warm_pool = agentsandbox_warm_pool.b.name
  env = [{ name = "SESSION", value = "s2", container_name = "python" }]`),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), knownvalue.StringExact(name+"-2")),
			},
		},
	))
}

// coldWithEnv checks a cold-started sandbox and its first container's env.
func coldWithEnv(want map[string]string) func(claim, sb *unstructured.Unstructured) error {
	return func(_, sb *unstructured.Unstructured) error {
		if sb.GetLabels()[agentsv1beta1.SandboxLaunchTypeLabel] != agentsv1beta1.SandboxLaunchTypeCold {
			return fmt.Errorf("sandbox %s was not cold-started", sb.GetName())
		}
		containers, _, _ := unstructured.NestedSlice(sb.Object, "spec", "podTemplate", "spec", "containers")
		env := map[string]string{}
		if len(containers) > 0 {
			list, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
			for _, e := range list {
				m := e.(map[string]any)
				env[fmt.Sprint(m["name"])] = fmt.Sprint(m["value"])
			}
		}
		for k, v := range want {
			if env[k] != v {
				return fmt.Errorf("env %s = %q, want %q (env %v)", k, env[k], v, env)
			}
		}
		return nil
	}
}

func TestAccSandboxClaim_import(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "Allowed")
	name := acctest.RandomName("session")
	cfg := claimConfig(ns, name, fmt.Sprintf(`  warm_pool       = agentsandbox_warm_pool.a.name
  shutdown_time   = %q
  shutdown_policy = "Delete"
  env             = [{ name = "SESSION", value = "s1" }, { name = "MODE", value = "batch", container_name = "python" }]
  labels          = { team = "a" }
  additional_pod_metadata = {
    labels = { "sandbox.users.io/session" = "s1" }
  }`, time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339)))
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			Config:                  cfg,
			ResourceName:            address,
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts"},
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

func TestAccSandboxClaim_disappears(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "")
	name := acctest.RandomName("gone")
	cfg := claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name`)
	// Deleted out of band: the plan creates it again.
	resource.Test(t, fam.Case(t, fam.Disappears(cfg, sandboxOf(t, warmFrom("pool-a")))...))
}

// expectPlannedChange checks that the plan changes attribute from the
// refreshed value before (the out-of-band edit, now visible) to after.
type planChange struct {
	attribute     string
	before, after any
}

func (c planChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != address {
			continue
		}
		b, _ := rc.Change.Before.(map[string]any)
		a, _ := rc.Change.After.(map[string]any)
		if fmt.Sprint(b[c.attribute]) != fmt.Sprint(c.before) || fmt.Sprint(a[c.attribute]) != fmt.Sprint(c.after) {
			resp.Error = fmt.Errorf("%s: planned %v -> %v, want %v -> %v", c.attribute, b[c.attribute], a[c.attribute], c.before, c.after)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", address)
}

// onlyChanges checks that the plan changes nothing but the named
// attributes (computed status that an update re-reads aside).
type onlyChanges []string

func (c onlyChanges) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != address {
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
		want := slices.Sorted(slices.Values(c))
		if !slices.Equal(changed, want) {
			resp.Error = fmt.Errorf("the plan changes %v, want exactly %v", changed, want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", address)
}

// TestAccSandboxClaim_drift: edits behind Terraform's back show in the
// plan as exactly those edits and are repaired in place, keeping the
// sandbox, even for warm_pool and env, whose configuration changes replace
// the claim.
func TestAccSandboxClaim_drift(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "Allowed")
	name := acctest.RandomName("drift")
	ref := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}
	cfg := claimConfig(ns, name, `  warm_pool = agentsandbox_warm_pool.a.name
  env       = [{ name = "SESSION", value = "s1" }]
  additional_pod_metadata = {
    labels = { "sandbox.users.io/session" = "s1" }
  }`)
	var sandbox captured
	repaired := func(checks ...plancheck.PlanCheck) resource.ConfigPlanChecks {
		return fam.Planned(plancheck.ResourceActionUpdate, append(checks,
			plancheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.same()))...)
	}
	kept := []statecheck.StateCheck{
		statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.same()),
		acctest.ExpectObject(address, gvr, func(u *unstructured.Unstructured) error {
			spec, _, _ := unstructured.NestedMap(u.Object, "spec")
			want := map[string]any{
				"warmPoolRef":           map[string]any{"name": "pool-a"},
				"lifecycle":             map[string]any{"shutdownPolicy": "Retain"},
				"env":                   []any{map[string]any{"name": "SESSION", "value": "s1"}},
				"additionalPodMetadata": map[string]any{"labels": map[string]any{"sandbox.users.io/session": "s1"}},
			}
			if fmt.Sprint(spec) != fmt.Sprint(want) {
				return fmt.Errorf("spec = %v\nwant %v", spec, want)
			}
			return nil
		}),
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           cfg,
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.set()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), knownvalue.StringExact(name)),
			},
		},
		resource.TestStep{
			// Someone adds an expiry and a pod label with a merge patch.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"spec":{
				  "lifecycle":{"shutdownTime":"2031-01-01T00:00:00Z","shutdownPolicy":"Delete"},
				  "additionalPodMetadata":{"labels":{"sandbox.users.io/extra":"x"}}}}`)
			},
			Config: cfg,
			ConfigPlanChecks: repaired(
				planChange{"shutdown_time", "2031-01-01T00:00:00Z", nil},
				planChange{"shutdown_policy", "Delete", "Retain"},
				onlyChanges{"shutdown_time", "shutdown_policy", "additional_pod_metadata"},
			),
			ConfigStateChecks: kept,
		},
		resource.TestStep{
			// The pool and the variables edited: repaired in place, not by
			// replacing the claim and its sandbox.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"spec":{"warmPoolRef":{"name":"pool-b"},"env":[{"name":"SESSION","value":"hacked"}]}}`)
			},
			Config: cfg,
			ConfigPlanChecks: repaired(
				planChange{"warm_pool", "pool-b", "pool-a"},
				onlyChanges{"warm_pool", "env"},
			),
			ConfigStateChecks: kept,
		},
	))
}

// TestAccSandboxClaim_failureReason: reasons the controller cannot get past
// fail the apply at once with its reason and message, and the claim is
// kept (tainted) for the next apply to replace.
func TestAccSandboxClaim_failureReason(t *testing.T) {
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "")
	name := acctest.RandomName("fail")
	var t0 time.Time
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			PreConfig: func() { t0 = time.Now() },
			Config:    claimConfig(ns, name, `  warm_pool = "no-such-pool"`),
			ExpectError: regexp.MustCompile(`(?s)Sandbox claim failed: WarmPoolNotFound.*Ready=False, reason WarmPoolNotFound:.*"no-such-pool".*` +
				`agentsandbox_warm_pool\.<name>\.name`),
		},
		resource.TestStep{
			PreConfig: func() {
				if d := time.Since(t0); d > 30*time.Second {
					t.Errorf("the failure took %s: it should not wait for the timeout", d)
				}
			},
			// A label outside the controller's allowed domains.
			Config: claimConfig(ns, name, `  warm_pool = "pool-a"
  additional_pod_metadata = { labels = { "example.com/team" = "a" } }`),
			ExpectError: regexp.MustCompile(`(?s)Sandbox claim failed: InvalidMetadata.*example.com.*allowed`),
		},
		resource.TestStep{
			// Variables, but the template does not allow them.
			Config: claimConfig(ns, name, `  warm_pool = "pool-a"
  env       = [{ name = "SESSION", value = "s1" }]`),
			ExpectError: regexp.MustCompile(`(?s)Sandbox claim failed: EnvVarsInjectionRejected.*not\s+allowed.*env_vars_injection_policy`),
		},
		resource.TestStep{
			// Expired already: refused at plan for a new claim (issue 13),
			// before the controller could report ClaimExpired.
			Config: claimConfig(ns, name, `  warm_pool     = "pool-a"
  shutdown_time = "2020-01-01T00:00:00Z"`),
			ExpectError: regexp.MustCompile(`(?s)Shutdown time in the past.*has already passed`),
		},
		resource.TestStep{
			// Without waiting, the failure is not the apply's: the claim is
			// created and reports not ready.
			Config: claimConfig(ns, name, `  warm_pool      = "no-such-pool"
  wait_for_ready = false`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), knownvalue.StringExact("")),
			},
		},
	))
}

// TestAccSandboxClaim_badInput runs bad configurations through the
// terraform CLI: each fails at plan, quoting the bad value, and no request
// reaches the cluster. The attribute paths are checked in
// TestBadInputFailsAtPlanWithItsPath.
func TestAccSandboxClaim_badInput(t *testing.T) {
	var cases []acctest.BadConfig
	for _, tc := range []struct{ body, want string }{
		{`shutdown_time = "tomorrow"`, `(?s)Invalid timestamp.*"tomorrow"`},
		{`ttl_seconds_after_finished = -5`, `(?s)ttl_seconds_after_finished.*-5`},
		{`shutdown_policy = "Orphan"`, `(?s)"Orphan"`},
		{`env = [{ name = "A=B", value = "x" }]`, `(?s)Invalid environment variable name.*"A=B"`},
		{`env = [{ name = "A", value = "x" }, { name = "A", value = "y" }]`, `(?s)Duplicate environment variable.*env\[0\] and env\[1\] both set "A"`},
		{`additional_pod_metadata = { labels = { "agents.x-k8s.io/claim-uid" = "x" } }`, `(?s)Reserved label key.*"agents.x-k8s.io/claim-uid"`},
		{`additional_pod_metadata = { annotations = { "kubernetes.io/psp" = "x" } }`, `(?s)Restricted pod annotation.*"kubernetes.io/psp"`},
	} {
		cases = append(cases, acctest.BadConfig{Config: acctest.Config(`resource "agentsandbox_sandbox_claim" "test" {
  name      = "claim"
  warm_pool = "pool"
  ` + tc.body + `
}
`), Error: tc.want})
	}
	resource.Test(t, fam.Case(t, acctest.RefusedAtPlan(t, cases...)...))
}

// TestAccSandboxClaim_refreshCost: a no-change refresh costs one GET per
// claim (the pools' GETs are theirs).
func TestAccSandboxClaim_refreshCost(t *testing.T) {
	const n = 5
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "")
	name := acctest.RandomName("cost")
	cfg := acctest.Config(pools(ns) + fmt.Sprintf(`
resource "agentsandbox_sandbox_claim" "test" {
  count     = %[3]d
  name      = "%[1]s-${count.index}"
  namespace = %[2]q
  warm_pool = agentsandbox_warm_pool.a.name
}
`, name, ns, n))
	cost := acctest.NewRequestCost(t, n, "claims (and 2 pools)")
	resource.Test(t, fam.Case(t,
		cost.CreateStep(cfg, "create (more claims than warm sandboxes)"),
		// One GET per claim and one per pool.
		cost.RefreshStep("GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxclaims/{name}", 2),
	))
}

// TestAccSandboxClaim_examplePlans plans the documentation's example, with
// the template and pool examples it refers to, so the registry page never
// shows a configuration the schema or its validation refuses. Resources of
// other providers (the pool example's autoscaler) are left out.
func TestAccSandboxClaim_examplePlans(t *testing.T) {
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config:             acctest.Config(acctest.ExampleConfig(t, "agentsandbox_sandbox_template", "agentsandbox_warm_pool", "agentsandbox_sandbox_claim")),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}))
}
