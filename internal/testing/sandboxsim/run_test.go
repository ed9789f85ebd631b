package sandboxsim

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// TestRun_LeaderElection runs two instances on a Lease of their own: exactly
// one leads, and the other takes over promptly once the leader is cancelled
// (the Lease is released, not left to expire). Both watch only an empty
// namespace so that they do not reconcile the other tests' objects.
func TestRun_LeaderElection(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	type instance struct {
		cancel context.CancelFunc
		led    chan struct{}
		done   chan struct{} // closed when Run has returned err
		err    error
	}
	start := func() *instance {
		ctx, cancel := context.WithCancel(context.Background())
		in := &instance{cancel: cancel, led: make(chan struct{}, 8), done: make(chan struct{})}
		opts := Options{
			Logger:         testLogger,
			LeaseName:      "sandboxsim-election-test",
			LeaseNamespace: ns,
			Namespaces:     []string{ns},
			LeaseDuration:  6 * time.Second,
			RenewDeadline:  4 * time.Second,
			RetryPeriod:    500 * time.Millisecond,
			OnStartedLeading: func() {
				select {
				case in.led <- struct{}{}:
				default:
				}
			},
		}
		go func() {
			defer close(in.done)
			in.err = Run(ctx, e.cfg, opts)
		}()
		t.Cleanup(func() {
			cancel()
			<-in.done
		})
		return in
	}
	led := func(in *instance, within time.Duration) bool {
		select {
		case <-in.led:
			return true
		case <-in.done:
			t.Fatalf("instance stopped: %v", in.err)
		case <-time.After(within):
		}
		return false
	}

	a := start()
	if !led(a, shortWait) {
		t.Fatal("the only instance never became leader")
	}
	b := start()
	if led(b, 3*time.Second) {
		t.Fatal("a second instance became leader while the first still held the Lease")
	}
	lease := &coordinationv1.Lease{}
	if !e.get(t, ns, "sandboxsim-election-test", lease) || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatalf("Lease has no holder: %+v", lease.Spec)
	}

	a.cancel()
	<-a.done
	if a.err != nil {
		t.Fatalf("cancelled instance returned %v, want nil", a.err)
	}
	handover := time.Now()
	if !led(b, 10*time.Second) {
		t.Fatal("the follower did not take over within 10s of the leader stopping")
	}
	t.Logf("TIMING leader handover %.2fs", time.Since(handover).Seconds())

	// Let the new leader's informers finish syncing before the cleanup stops
	// it: a manager cancelled mid-sync reports sync "timeouts" through
	// controller-runtime's process-wide logger, which belongs to the shared
	// instance and so is not silenced by this instance's shutdown.
	time.Sleep(time.Second)
}

// TestSettledObjectsAreNotRewritten guards against reconcile loops that keep
// writing: once everything is Ready, no object the stand-in touches may change
// resourceVersion while nothing else happens.
func TestSettledObjectsAreNotRewritten(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	e.create(t, newTemplate(ns, "tpl"))
	e.create(t, newPool(ns, "pool", "tpl", 2))
	e.waitPool(t, ns, "pool", 2, readyTimeout)
	e.create(t, newClaim(ns, "claim", "pool"))
	e.waitClaim(t, ns, "claim", shortWait, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)
	sb := newSandbox(ns, "solo")
	sb.Spec.Service = ptr.To(true)
	e.create(t, sb)
	e.waitSandbox(t, ns, "solo", readyTimeout, "sandbox Ready", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))
	e.waitPool(t, ns, "pool", 2, readyTimeout) // replenished after the adoption

	snapshot := func() map[string]string {
		versions := map[string]string{}
		lists := []client.ObjectList{
			&agentsv1beta1.SandboxList{}, &extv1beta1.SandboxTemplateList{}, &extv1beta1.SandboxWarmPoolList{},
			&extv1beta1.SandboxClaimList{}, &corev1.PodList{}, &corev1.ServiceList{}, &networkingv1.NetworkPolicyList{},
		}
		for _, l := range lists {
			if err := e.client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			_ = meta.EachListItem(l, func(o runtime.Object) error {
				m, _ := meta.Accessor(o)
				versions[fmt.Sprintf("%T/%s", o, m.GetName())] = m.GetResourceVersion()
				return nil
			})
		}
		return versions
	}
	// A moment for the last status writes of the replenished member to land.
	time.Sleep(time.Second)
	before := snapshot()
	time.Sleep(3 * time.Second)
	after := snapshot()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed from resourceVersion %s to %s while idle", k, v, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d objects before, %d after", len(before), len(after))
	}
}
