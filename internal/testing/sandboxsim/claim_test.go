package sandboxsim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

func newClaim(ns, name, pool string) *extv1beta1.SandboxClaim {
	return &extv1beta1.SandboxClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       extv1beta1.SandboxClaimSpec{WarmPoolRef: extv1beta1.SandboxWarmPoolRef{Name: pool}},
	}
}

// waitClaim polls until the claim's Ready condition has the wanted status
// and reason, and returns the claim.
func (e *testEnv) waitClaim(t *testing.T, ns, name string, timeout time.Duration, status metav1.ConditionStatus, reason string) *extv1beta1.SandboxClaim {
	t.Helper()
	claim := &extv1beta1.SandboxClaim{}
	eventuallyEvery(t, timeout, 20*time.Millisecond, fmt.Sprintf("claim %s Ready=%s/%s", name, status, reason), func() (bool, string) {
		if !e.get(t, ns, name, claim) {
			return false, "claim not found"
		}
		c := meta.FindStatusCondition(claim.Status.Conditions, extv1beta1.ClaimConditionReady)
		if c == nil || c.Status != status || c.Reason != reason {
			return false, describeConditions(claim.Status.Conditions)
		}
		// v0.5.x forwards the sandbox's own Ready condition, which carries
		// the sandbox's generation (package releases); the stand-in of any
		// profile may be the one running.
		gen := claim.Generation
		detail := ""
		if sbName := claim.Status.Sandbox.Name; sbName != "" && c.ObservedGeneration != gen {
			sb := &agentsv1beta1.Sandbox{}
			if e.get(t, ns, sbName, sb) {
				sc := meta.FindStatusCondition(sb.Status.Conditions, agentsv1beta1.ConditionReady.String())
				if sc != nil && sc.Status == c.Status && sc.Reason == c.Reason && sc.ObservedGeneration == c.ObservedGeneration {
					gen = sc.ObservedGeneration
				}
				detail = fmt.Sprintf("; sandbox %s generation %d, its Ready %+v", sbName, sb.Generation, sc)
			}
		}
		return c.ObservedGeneration == gen, fmt.Sprintf("%s (observedGeneration %d, want %d%s)", describeConditions(claim.Status.Conditions), c.ObservedGeneration, gen, detail)
	})
	return claim
}

func TestClaim_AdoptsWarmSandbox(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	tmpl := newTemplate(ns, "tpl")
	tmpl.Spec.PodTemplate.Metadata.Labels = map[string]string{"app.example/role": "agent"}
	e.create(t, tmpl)
	e.create(t, newPool(ns, "pool", "tpl", 2))
	e.waitPool(t, ns, "pool", 2, readyTimeout)
	warm := names(e.poolMembers(t, ns, "pool"))

	claim := newClaim(ns, "session", "pool")
	claim.Spec.AdditionalPodMetadata.Labels = map[string]string{"sandbox.users.io/user": "alice"}
	start := time.Now()
	e.create(t, claim)
	claim = e.waitClaim(t, ns, "session", shortWait, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
	t.Logf("TIMING warm adoption: claim Ready %.0fms after create", float64(time.Since(start).Microseconds())/1000)

	name := claim.Status.Sandbox.Name
	if !slices.Contains(warm, name) {
		t.Fatalf("claim got sandbox %q, not one of the warm ones %v", name, warm)
	}
	if len(claim.Status.Sandbox.PodIPs) == 0 {
		t.Error("claim status has no pod IPs")
	}
	if claim.Annotations[sandboxapi.AnnotationSandboxName] != name {
		t.Errorf("claim annotation %s = %q, want %q", sandboxapi.AnnotationSandboxName, claim.Annotations[sandboxapi.AnnotationSandboxName], name)
	}

	sb := &agentsv1beta1.Sandbox{}
	e.get(t, ns, name, sb)
	if !metav1.IsControlledBy(sb, claim) || len(sb.OwnerReferences) != 1 {
		t.Errorf("adopted sandbox owners = %v, want only the claim", sb.OwnerReferences)
	}
	if _, ok := sb.Labels[sandboxapi.LabelWarmPoolSandbox]; ok {
		t.Error("adopted sandbox kept the warm-pool label")
	}
	if sb.Labels[sandboxapi.LabelLaunchType] != sandboxapi.LaunchTypeWarm || sb.Labels[sandboxapi.LabelClaimUID] != string(claim.UID) {
		t.Errorf("adopted sandbox labels = %v", sb.Labels)
	}
	pm := sb.Spec.PodTemplate.Metadata
	if pm.Labels[sandboxapi.LabelClaimUID] != string(claim.UID) || pm.Labels["sandbox.users.io/user"] != "alice" || pm.Labels["app.example/role"] != "agent" {
		t.Errorf("adopted pod template labels = %v", pm.Labels)
	}
	if _, ok := pm.Annotations[sandboxapi.AnnotationSafeToEvict]; ok {
		t.Error("adopted pod template kept safe-to-evict")
	}
	pod := &corev1.Pod{}
	eventually(t, shortWait, "pod leaves the pool", func() (bool, string) {
		e.get(t, ns, name, pod)
		_, warmLabel := pod.Labels[sandboxapi.LabelWarmPoolSandbox]
		_, evictable := pod.Annotations[sandboxapi.AnnotationSafeToEvict]
		return !warmLabel && !evictable && pod.Labels["sandbox.users.io/user"] == "alice" &&
				pod.Labels[sandboxapi.LabelSandboxTemplateRefHash] == sandboxapi.NameHash("tpl"),
			fmt.Sprintf("labels %v annotations %v", pod.Labels, pod.Annotations)
	})

	start = time.Now()
	eventually(t, readyTimeout, "pool replenished", func() (bool, string) {
		m := e.poolMembers(t, ns, "pool")
		pool := &extv1beta1.SandboxWarmPool{}
		e.get(t, ns, "pool", pool)
		return len(m) == 2 && !slices.Contains(names(m), name) && pool.Status.ReadyReplicas == 2,
			fmt.Sprintf("members %v status %+v", names(m), pool.Status)
	})
	t.Logf("TIMING pool back to 2 ready %.2fs after the adoption", time.Since(start).Seconds())

	t.Run("additionalPodMetadata edits reach the pod", func(t *testing.T) {
		e.update(t, claim, func() { claim.Spec.AdditionalPodMetadata.Labels["sandbox.users.io/user"] = "bob" })
		eventually(t, shortWait, "pod relabelled", func() (bool, string) {
			e.get(t, ns, name, pod)
			return pod.Labels["sandbox.users.io/user"] == "bob", fmt.Sprintf("labels %v", pod.Labels)
		})
	})

	t.Run("concurrent claims get distinct sandboxes", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, n := range []string{"c1", "c2"} {
			wg.Go(func() {
				if err := e.client.Create(context.Background(), newClaim(ns, n, "pool")); err != nil {
					t.Errorf("creating claim %s: %v", n, err)
				}
			})
		}
		wg.Wait()
		c1 := e.waitClaim(t, ns, "c1", shortWait, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
		c2 := e.waitClaim(t, ns, "c2", shortWait, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
		if c1.Status.Sandbox.Name == c2.Status.Sandbox.Name {
			t.Fatalf("both claims got sandbox %s", c1.Status.Sandbox.Name)
		}
		for _, c := range []*extv1beta1.SandboxClaim{c1, c2} {
			sb := &agentsv1beta1.Sandbox{}
			e.get(t, ns, c.Status.Sandbox.Name, sb)
			if !metav1.IsControlledBy(sb, c) {
				t.Errorf("sandbox %s not controlled by claim %s", sb.Name, c.Name)
			}
		}
	})
}

func TestClaim_ColdStart(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	tmpl := newTemplate(ns, "tpl")
	tmpl.Spec.EnvVarsInjectionPolicy = extv1beta1.EnvVarsAllowed
	e.create(t, tmpl)
	e.create(t, newPool(ns, "empty", "tpl", 0))

	claim := newClaim(ns, "cold", "empty")
	claim.Spec.Env = []extv1beta1.EnvVar{{Name: "TASK", Value: "42"}}
	start := time.Now()
	e.create(t, claim)
	claim = e.waitClaim(t, ns, "cold", readyTimeout, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
	t.Logf("TIMING cold start: claim Ready %.2fs after create", time.Since(start).Seconds())

	if claim.Status.Sandbox.Name != "cold" {
		t.Fatalf("cold-started sandbox is %q, want the claim's name", claim.Status.Sandbox.Name)
	}
	sb := &agentsv1beta1.Sandbox{}
	e.get(t, ns, "cold", sb)
	if !metav1.IsControlledBy(sb, claim) {
		t.Errorf("sandbox owners = %v", sb.OwnerReferences)
	}
	want := map[string]string{
		sandboxapi.LabelLaunchType:             sandboxapi.LaunchTypeCold,
		sandboxapi.LabelClaimUID:               string(claim.UID),
		sandboxapi.LabelSandboxTemplateRefHash: sandboxapi.NameHash("tpl"),
	}
	for k, v := range want {
		if sb.Labels[k] != v {
			t.Errorf("sandbox label %s = %q, want %q", k, sb.Labels[k], v)
		}
	}
	pod := &corev1.Pod{}
	e.get(t, ns, "cold", pod)
	if env := pod.Spec.Containers[0].Env; len(env) != 1 || env[0].Name != "TASK" || env[0].Value != "42" {
		t.Errorf("pod env = %v, want TASK=42 injected", env)
	}
	if pod.Labels[sandboxapi.LabelSandboxTemplateRefHash] != sandboxapi.NameHash("tpl") {
		t.Errorf("pod lacks the template-ref-hash label the template's NetworkPolicy selects on: %v", pod.Labels)
	}
}

func TestClaim_Errors(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	e.create(t, newClaim(ns, "orphan", "nopool"))
	e.waitClaim(t, ns, "orphan", shortWait, metav1.ConditionFalse, extv1beta1.ReasonWarmPoolNotFound)

	// The pool appears, but its template does not exist.
	e.create(t, newPool(ns, "nopool", "notemplate", 1))
	e.waitClaim(t, ns, "orphan", shortWait, metav1.ConditionFalse, extv1beta1.ReasonTemplateNotFound)

	// With the template the claim is served (warm or cold, whichever is
	// first); on v0.5.x that takes up to the claim's one-minute requeue,
	// since those releases do not watch templates.
	e.create(t, newTemplate(ns, "notemplate"))
	e.waitClaim(t, ns, "orphan", readyTimeout+time.Minute, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)

	bad := newClaim(ns, "bad-labels", "nopool")
	bad.Spec.AdditionalPodMetadata.Labels = map[string]string{"team": "x"} // no allowed domain prefix
	e.create(t, bad)
	e.waitClaim(t, ns, "bad-labels", shortWait, metav1.ConditionFalse, extv1beta1.ReasonInvalidMetadata)

	env := newClaim(ns, "bad-env", "nopool")
	env.Spec.Env = []extv1beta1.EnvVar{{Name: "X", Value: "1"}} // the template disallows injection
	e.create(t, env)
	e.waitClaim(t, ns, "bad-env", shortWait, metav1.ConditionFalse, extv1beta1.ReasonEnvVarsInjectionRejected)
}

func TestClaim_Lifecycle(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	e.create(t, newTemplate(ns, "tpl"))
	e.create(t, newPool(ns, "pool", "tpl", 0))

	t.Run("shutdownTime with Retain deletes only the sandbox", func(t *testing.T) {
		t.Parallel()
		claim := newClaim(ns, "retain", "pool")
		shutdown := time.Now().Add(8 * time.Second).Truncate(time.Second) // the API keeps whole seconds
		claim.Spec.Lifecycle = &extv1beta1.Lifecycle{ShutdownTime: &metav1.Time{Time: shutdown}}
		e.create(t, claim)
		e.waitClaim(t, ns, "retain", readyTimeout, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
		e.waitClaim(t, ns, "retain", shortWait, metav1.ConditionFalse, extv1beta1.ReasonClaimExpired)
		t.Logf("claim expired %.2fs after shutdownTime", time.Since(shutdown).Seconds())
		eventually(t, shortWait, "sandbox deleted", func() (bool, string) {
			return e.gone(t, ns, "retain", &agentsv1beta1.Sandbox{}), "sandbox still there"
		})
		if e.gone(t, ns, "retain", &extv1beta1.SandboxClaim{}) {
			t.Error("Retain deleted the claim")
		}
	})

	t.Run("shutdownTime with Delete deletes the claim", func(t *testing.T) {
		t.Parallel()
		claim := newClaim(ns, "delete", "pool")
		claim.Spec.Lifecycle = &extv1beta1.Lifecycle{
			ShutdownTime:   &metav1.Time{Time: time.Now().Add(8 * time.Second)},
			ShutdownPolicy: extv1beta1.ShutdownPolicyDelete,
		}
		e.create(t, claim)
		e.waitClaim(t, ns, "delete", readyTimeout, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
		eventually(t, shortWait, "claim deleted", func() (bool, string) {
			return e.gone(t, ns, "delete", &extv1beta1.SandboxClaim{}), "claim still there"
		})
	})

	t.Run("ttlSecondsAfterFinished", func(t *testing.T) {
		t.Parallel()
		claim := newClaim(ns, "job", "pool")
		// A TTL of a few seconds keeps the Finished sandbox observable on a
		// loaded machine; with 1 s the claim (and its sandbox) could be gone
		// before the first poll saw Finished.
		claim.Spec.Lifecycle = &extv1beta1.Lifecycle{TTLSecondsAfterFinished: ptr.To[int32](5), ShutdownPolicy: extv1beta1.ShutdownPolicyDelete}
		e.create(t, claim)
		e.waitClaim(t, ns, "job", readyTimeout, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)

		// kwok only completes Job pods, so finish this one by hand.
		pod := &corev1.Pod{}
		e.get(t, ns, "job", pod)
		patch := []byte(`{"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}]}}`)
		if err := e.client.Status().Patch(context.Background(), pod, rawMergePatch(patch)); err != nil {
			t.Fatalf("completing the pod: %v", err)
		}
		e.waitSandbox(t, ns, "job", shortWait, "sandbox Finished", func(sb *agentsv1beta1.Sandbox) (bool, string) {
			c := cond(sb.Status.Conditions, agentsv1beta1.ConditionFinished)
			return c != nil && c.Status == metav1.ConditionTrue && c.Reason == agentsv1beta1.ReasonPodSucceeded, describeConditions(sb.Status.Conditions)
		})
		eventually(t, shortWait, "claim deleted five seconds after Finished", func() (bool, string) {
			return e.gone(t, ns, "job", &extv1beta1.SandboxClaim{}), "claim still there"
		})
	})
}
