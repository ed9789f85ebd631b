package sandboxclaim_test

// Behaviour of real agent-sandbox releases (issue 16), checked against the
// release the run runs (AGENTSANDBOX_TEST_RELEASE; make
// testacc-releases runs every profile). On v0.5.x the claim's Ready
// condition is the sandbox's, with the sandbox's generation, and the
// controller's adoption Update leaves `additionalPodMetadata: {}` on the
// claim.

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// writes lists the requests of the last step that change something.
func writes() []string {
	var out []string
	for k, n := range kube.RequestCounts() {
		switch strings.SplitN(k, " ", 2)[0] {
		case "GET", "LIST", "WATCH":
		default:
			out = append(out, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// TestAccSandboxClaim_releaseUpdateConverges: an in-place update of a
// claim converges (v0.5.6 forwards the sandbox's Ready condition with the
// sandbox's generation, so waiting for the claim's generation never ends),
// and a change to `timeouts` alone writes nothing: the claim keeps its
// generation and the `additionalPodMetadata: {}` the controller wrote at
// adoption, and no empty `env` is sent.
func TestAccSandboxClaim_releaseUpdateConverges(t *testing.T) {
	profile, err := testenv.ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("release profile %s", profile)
	ns := acctest.Namespace(t)
	createTemplate(t, ns, "python", "")
	name := acctest.RandomName("session")
	future := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	// A short limit: code that waits for the claim's generation on v0.5.x
	// fails here instead of after five minutes.
	body := func(extra, timeout string) string {
		return fmt.Sprintf("  warm_pool = agentsandbox_warm_pool.a.name\n%s\n  timeouts {\n    update = %q\n  }", extra, timeout)
	}
	var t0 time.Time
	var generation int64
	claimSpec := func(check func(u *unstructured.Unstructured) error) statecheck.StateCheck {
		return acctest.ExpectObject(address, gvr, check)
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           claimConfig(ns, name, body("", "20s")),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				claimSpec(func(u *unstructured.Unstructured) error {
					if _, has := u.Object["spec"].(map[string]any)["env"]; has {
						return fmt.Errorf("spec.env is set without variables: %v", u.Object["spec"])
					}
					if _, has, _ := unstructured.NestedMap(u.Object, "spec", "additionalPodMetadata"); !has {
						return fmt.Errorf("spec.additionalPodMetadata missing: %v", u.Object["spec"])
					}
					return nil
				}),
			},
		},
		resource.TestStep{
			PreConfig: func() { t0 = time.Now() },
			Config:    claimConfig(ns, name, body(fmt.Sprintf("  shutdown_time = %q", future.Format(time.RFC3339)), "20s")),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate,
				plancheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_time"), knownvalue.StringExact(future.Format(time.RFC3339)))),
			Check: func(*terraform.State) error {
				t.Logf("profile %s: plan + in-place update (shutdown_time) until the claim is ready: %s", profile.Name, time.Since(t0).Round(time.Millisecond))
				return nil
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				claimSpec(func(u *unstructured.Unstructured) error {
					generation = u.GetGeneration()
					return nil
				}),
			},
		},
		resource.TestStep{
			PreConfig:        kube.ResetRequestCounts,
			Config:           claimConfig(ns, name, body(fmt.Sprintf("  shutdown_time = %q", future.Format(time.RFC3339)), "25s")),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
			Check: func(*terraform.State) error {
				if w := writes(); len(w) > 0 {
					return fmt.Errorf("a change to timeouts alone sent writes: %v", w)
				}
				t.Logf("timeouts-only change: %d requests, none a write: %v", kube.RequestCount(), kube.RequestCounts())
				return nil
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				claimSpec(func(u *unstructured.Unstructured) error {
					if u.GetGeneration() != generation {
						return fmt.Errorf("generation went from %d to %d", generation, u.GetGeneration())
					}
					if _, has, _ := unstructured.NestedMap(u.Object, "spec", "additionalPodMetadata"); !has {
						return fmt.Errorf("spec.additionalPodMetadata was removed: %v", u.Object["spec"])
					}
					return nil
				}),
			},
		},
	))
}

// TestAccSandboxClaim_releaseTemplateNotFound: a claim whose pool's
// template is missing waits (the controller recovers by itself: within a
// minute on v0.5.x, at once where it watches templates), and a wait that
// times out says so and what to do, instead of failing at once.
//
// The template is created only once the replacement claim has reported
// TemplateNotFound and nobody has written it for 2 s, so that the wait
// spans the controller's recovery. Upstream reconciles a claim on any write
// to it (the claim watch's predicate passes every update:
// sandboxclaim_controller.go:2243-2262 at v0.5.6), so a later write would
// end the wait early; without one, v0.5.x recovers on its one-minute
// requeue (:392-401 at v0.5.6, :285 at v0.5.0, a constant with no flag),
// which no test-only setting shortens.
func TestAccSandboxClaim_releaseTemplateNotFound(t *testing.T) {
	profile, err := testenv.ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ns := acctest.Namespace(t)
	name := acctest.RandomName("session")
	// The pool is made through the API: agentsandbox_warm_pool refuses a
	// missing template before writing anything.
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": extv1beta1.GroupVersion.String(),
		"kind":       extv1beta1.SandboxWarmPoolKind,
		"metadata":   map[string]any{"name": "pool-late"},
		"spec":       map[string]any{"replicas": int64(1), "sandboxTemplateRef": map[string]any{"name": "late"}},
	}}
	if _, err := acctest.Dynamic(t).Resource(sandboxapi.SandboxWarmPoolGVR).Namespace(ns).Create(t.Context(), pool, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating SandboxWarmPool %s/pool-late: %v", ns, err)
	}
	claim := func(create string) string {
		return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_claim" "test" {
  name      = %q
  namespace = %q
  warm_pool = "pool-late"
  timeouts {
    create = %q
  }
}
`, name, ns, create))
	}
	var t0, created time.Time
	var wg sync.WaitGroup
	var createErr error
	// waitForTemplateNotFound returns once a claim other than the one
	// with UID old reports TemplateNotFound and has not changed for 2 s
	// (the provider's post-create ownership write and the controller's
	// reconciles are over).
	waitForTemplateNotFound := func(old string) error {
		var last, rv string
		var since time.Time
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			c, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				continue
			}
			if c.GetResourceVersion() != rv {
				rv, since = c.GetResourceVersion(), time.Now()
			}
			conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Ready" {
					last = fmt.Sprintf("claim %s Ready reason %v", c.GetUID(), m["reason"])
					if string(c.GetUID()) != old && m["reason"] == sandboxapi.ClaimReasonTemplateNotFound && time.Since(since) >= 2*time.Second {
						return nil
					}
				}
			}
		}
		return fmt.Errorf("the replacement claim never reported TemplateNotFound within 2m (last seen: %s)", last)
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			PreConfig: func() { t0 = time.Now() },
			Config:    claim("6s"),
			// The reason and the advice, after the whole timeout.
			ExpectError: regexp.MustCompile(`(?s)TemplateNotFound.*retries by itself`),
		},
		resource.TestStep{
			PreConfig: func() {
				if waited := time.Since(t0); waited < 6*time.Second {
					t.Errorf("the wait ended after %s, before its 6s timeout", waited)
				}
				t0 = time.Now()
				old, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("reading the tainted claim: %v", err)
				}
				// The template appears while the replacement claim waits
				// on TemplateNotFound.
				wg.Add(1)
				go func() {
					defer wg.Done()
					if createErr = waitForTemplateNotFound(string(old.GetUID())); createErr != nil {
						t.Error(createErr) // the apply then times out: this says why
						return
					}
					created = time.Now()
					tmpl := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": extv1beta1.GroupVersion.String(),
						"kind":       extv1beta1.SandboxTemplateKind,
						"metadata":   map[string]any{"name": "late"},
						"spec": map[string]any{
							"networkPolicyManagement": "Unmanaged",
							"podTemplate": map[string]any{"spec": map[string]any{
								"containers": []any{map[string]any{
									"name": "python", "image": "registry.example/python-runtime:1",
									"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}},
								}},
							}},
						},
					}}
					_, createErr = acctest.Dynamic(t).Resource(sandboxapi.SandboxTemplateGVR).Namespace(ns).Create(t.Context(), tmpl, metav1.CreateOptions{})
				}()
			},
			Config:           claim("3m"),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: func(*terraform.State) error {
				wg.Wait()
				if createErr != nil {
					return createErr
				}
				t.Logf("profile %s: claim ready %s after the apply started, %s after the template was created (once the claim reported TemplateNotFound and stayed unchanged for 2 s)",
					profile.Name, time.Since(t0).Round(time.Millisecond), time.Since(created).Round(time.Millisecond))
				return nil
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
			},
		},
	))
}
