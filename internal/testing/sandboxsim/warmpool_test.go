package sandboxsim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

func newPool(ns, name, template string, replicas int32) *extv1beta1.SandboxWarmPool {
	return &extv1beta1.SandboxWarmPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: extv1beta1.SandboxWarmPoolSpec{
			Replicas:    ptr.To(replicas),
			TemplateRef: extv1beta1.SandboxTemplateRef{Name: template},
		},
	}
}

// waitPool polls until the pool reports want ready replicas out of want, for
// its current generation, and returns it.
func (e *testEnv) waitPool(t *testing.T, ns, name string, want int32, timeout time.Duration) *extv1beta1.SandboxWarmPool {
	t.Helper()
	pool := &extv1beta1.SandboxWarmPool{}
	eventuallyEvery(t, timeout, 50*time.Millisecond, fmt.Sprintf("pool %s with %d ready", name, want), func() (bool, string) {
		e.get(t, ns, name, pool)
		st := pool.Status
		return st.Replicas == want && st.ReadyReplicas == want && st.ObservedGeneration == pool.Generation,
			fmt.Sprintf("generation %d status %+v", pool.Generation, st)
	})
	return pool
}

// poolMembers lists the sandboxes that carry the pool's label.
func (e *testEnv) poolMembers(t *testing.T, ns, pool string) []agentsv1beta1.Sandbox {
	t.Helper()
	var list agentsv1beta1.SandboxList
	if err := e.client.List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{sandboxapi.LabelWarmPoolSandbox: sandboxapi.NameHash(pool)}); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(sb agentsv1beta1.Sandbox) bool { return !sb.DeletionTimestamp.IsZero() })
}

func names(sbs []agentsv1beta1.Sandbox) []string {
	var out []string
	for _, sb := range sbs {
		out = append(out, sb.Name)
	}
	slices.Sort(out)
	return out
}

func TestWarmPool_FillScaleAndStatus(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	e.create(t, newTemplate(ns, "tpl"))

	start := time.Now()
	e.create(t, newPool(ns, "pool", "tpl", 5))
	pool := e.waitPool(t, ns, "pool", 5, readyTimeout)
	t.Logf("TIMING warm pool of 5: all Ready %.2fs after create", time.Since(start).Seconds())

	if want := sandboxapi.WarmPoolSelector("pool"); pool.Status.Selector != want {
		t.Errorf("status.selector = %q, want %q", pool.Status.Selector, want)
	}
	members := e.poolMembers(t, ns, "pool")
	if len(members) != 5 {
		t.Fatalf("%d members, want 5: %v", len(members), names(members))
	}
	refHash := sandboxapi.NameHash("tpl")
	for _, sb := range members {
		if !strings.HasPrefix(sb.Name, "pool-") || sb.GenerateName != "pool-" {
			t.Errorf("member %s: generateName %q", sb.Name, sb.GenerateName)
		}
		if !metav1.IsControlledBy(&sb, pool) {
			t.Errorf("member %s not controlled by the pool: %v", sb.Name, sb.OwnerReferences)
		}
		if sb.Labels[sandboxapi.LabelSandboxTemplateRefHash] != refHash || sb.Labels[sandboxapi.LabelLaunchType] != sandboxapi.LaunchTypeWarm ||
			sb.Labels[sandboxapi.LabelSandboxTemplateHash] == "" || sb.Labels[LabelManagedBy] != ManagedByValue {
			t.Errorf("member %s labels %v", sb.Name, sb.Labels)
		}
		pod := &corev1.Pod{}
		if !e.get(t, ns, sb.Name, pod) {
			t.Errorf("member %s has no pod", sb.Name)
			continue
		}
		if pod.Labels[sandboxapi.LabelWarmPoolSandbox] != sandboxapi.NameHash("pool") || pod.Labels[sandboxapi.LabelSandboxTemplateRefHash] != refHash {
			t.Errorf("pod %s labels %v", pod.Name, pod.Labels)
		}
		if pod.Annotations[sandboxapi.AnnotationSafeToEvict] != "true" {
			t.Errorf("pod %s lacks the safe-to-evict annotation: %v", pod.Name, pod.Annotations)
		}
		// Template-made pods are hardened like upstream's.
		if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken ||
			pod.Spec.DNSPolicy != corev1.DNSNone || pod.Spec.DNSConfig == nil {
			t.Errorf("pod %s not hardened: automount %v dnsPolicy %q", pod.Name, pod.Spec.AutomountServiceAccountToken, pod.Spec.DNSPolicy)
		}
	}

	t.Run("scale subresource", func(t *testing.T) {
		scale := &autoscalingv1.Scale{}
		if err := e.client.SubResource("scale").Get(context.Background(), pool, scale); err != nil {
			t.Fatalf("reading scale: %v", err)
		}
		if scale.Spec.Replicas != 5 || scale.Status.Replicas != 5 || scale.Status.Selector != sandboxapi.WarmPoolSelector("pool") {
			t.Errorf("scale = %+v", scale)
		}
		scale.Spec.Replicas = 2
		if err := e.client.SubResource("scale").Update(context.Background(), pool, client.WithSubResourceBody(scale)); err != nil {
			t.Fatalf("scaling to 2: %v", err)
		}
		start := time.Now()
		e.waitPool(t, ns, "pool", 2, shortWait)
		eventually(t, shortWait, "3 members deleted", func() (bool, string) {
			m := e.poolMembers(t, ns, "pool")
			return len(m) == 2, fmt.Sprintf("members %v", names(m))
		})
		t.Logf("scaled 5 -> 2 in %.2fs", time.Since(start).Seconds())
	})

	t.Run("scale up", func(t *testing.T) {
		e.update(t, pool, func() { pool.Spec.Replicas = ptr.To[int32](3) })
		start := time.Now()
		e.waitPool(t, ns, "pool", 3, readyTimeout)
		t.Logf("scaled 2 -> 3 ready in %.2fs", time.Since(start).Seconds())
	})
}

func TestWarmPool_UpdateStrategy(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	for _, strategy := range []extv1beta1.UpdateStrategyType{extv1beta1.UpdateStrategyOnReplenish, extv1beta1.UpdateStrategyRecreate} {
		t.Run(string(strategy), func(t *testing.T) {
			t.Parallel()
			name := strings.ToLower(string(strategy))
			tmpl := newTemplate(ns, name)
			e.create(t, tmpl)
			pool := newPool(ns, name, name, 2)
			pool.Spec.UpdateStrategy = &extv1beta1.SandboxWarmPoolUpdateStrategy{Type: strategy}
			e.create(t, pool)
			e.waitPool(t, ns, name, 2, readyTimeout)
			before := e.poolMembers(t, ns, name)
			oldHash := before[0].Labels[sandboxapi.LabelSandboxTemplateHash]

			e.update(t, tmpl, func() {
				tmpl.Spec.PodTemplate.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "VERSION", Value: "2"}}
			})
			hasNewSpec := func(sb agentsv1beta1.Sandbox) bool {
				env := sb.Spec.PodTemplate.Spec.Containers[0].Env
				return len(env) == 1 && env[0].Value == "2" && sb.Labels[sandboxapi.LabelSandboxTemplateHash] != oldHash
			}

			if strategy == extv1beta1.UpdateStrategyRecreate {
				start := time.Now()
				eventually(t, readyTimeout, "all members replaced", func() (bool, string) {
					m := e.poolMembers(t, ns, name)
					ok := len(m) == 2 && !slices.ContainsFunc(m, func(sb agentsv1beta1.Sandbox) bool {
						return !hasNewSpec(sb) || slices.Contains(names(before), sb.Name)
					})
					return ok, fmt.Sprintf("members %v (before %v)", names(m), names(before))
				})
				e.waitPool(t, ns, name, 2, readyTimeout)
				t.Logf("Recreate: pool replaced and Ready %.2fs after the template change", time.Since(start).Seconds())
				return
			}

			// OnReplenish: existing members stay as they are...
			time.Sleep(3 * time.Second)
			if got := names(e.poolMembers(t, ns, name)); !slices.Equal(got, names(before)) {
				t.Fatalf("OnReplenish replaced members on a template change: %v -> %v", names(before), got)
			}
			// ...and a replacement is built from the new template.
			victim := before[0]
			if err := e.client.Delete(context.Background(), &victim); err != nil {
				t.Fatal(err)
			}
			eventually(t, readyTimeout, "replacement from the new template", func() (bool, string) {
				m := e.poolMembers(t, ns, name)
				fresh := slices.ContainsFunc(m, hasNewSpec)
				kept := slices.ContainsFunc(m, func(sb agentsv1beta1.Sandbox) bool { return sb.Name == before[1].Name && !hasNewSpec(sb) })
				return len(m) == 2 && fresh && kept, fmt.Sprintf("members %v", names(m))
			})
			e.waitPool(t, ns, name, 2, readyTimeout)
		})
	}
}
