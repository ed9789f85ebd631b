package sandboxsim

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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
		done   chan error
	}
	start := func() *instance {
		ctx, cancel := context.WithCancel(context.Background())
		in := &instance{cancel: cancel, led: make(chan struct{}, 8), done: make(chan error, 1)}
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
		go func() { in.done <- Run(ctx, e.cfg, opts) }()
		t.Cleanup(func() { cancel(); <-in.done })
		return in
	}
	led := func(in *instance, within time.Duration) bool {
		select {
		case <-in.led:
			return true
		case err := <-in.done:
			t.Fatalf("instance stopped: %v", err)
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
	if err := <-a.done; err != nil {
		t.Fatalf("cancelled instance returned %v, want nil", err)
	}
	handover := time.Now()
	if !led(b, 10*time.Second) {
		t.Fatal("the follower did not take over within 10s of the leader stopping")
	}
	t.Logf("TIMING leader handover %.2fs", time.Since(handover).Seconds())
}
