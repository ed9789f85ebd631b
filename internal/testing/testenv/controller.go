package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Controller is the agent-sandbox controller run for the duration of an
// environment (RealController: upstream's own, of the environment's
// release). It is an interface so that a test of the harness can substitute
// its own.
type Controller interface {
	// Name is shown in the harness's log.
	Name() string
	// Run reconciles until ctx is cancelled and then returns; an error
	// returned before cancellation means the controller failed. It calls
	// reconciling (which does not block) once it actually reconciles; the
	// harness waits for that before the tests start, so a test never races
	// the controller's start-up.
	Run(ctx context.Context, h Host, reconciling func()) error
}

// Host is what the environment gives its controller.
type Host struct {
	// Config and Kubeconfig reach the cluster.
	Config     *rest.Config
	Kubeconfig string
	// Dir is a directory of the controller's own (logs, certificates), kept
	// with the run directory after a failure.
	Dir string
	// Environ marks a process as one of the run's (leak detection); a
	// controller that starts processes adds it to their environment.
	Environ []string
	// WebhookPort is the 127.0.0.1 port that the release's conversion
	// webhook Service is routed to (0: no route; see serviceRoute).
	WebhookPort int
	// Log receives progress.
	Log io.Writer
}

// ControllerFunc adapts a plain function to Controller.
type ControllerFunc struct {
	Label string
	Fn    func(ctx context.Context, h Host, reconciling func()) error
}

// Name implements Controller.
func (c ControllerFunc) Name() string { return c.Label }

// Run implements Controller.
func (c ControllerFunc) Run(ctx context.Context, h Host, reconciling func()) error {
	return c.Fn(ctx, h, reconciling)
}

// runningController is a Controller started in a goroutine.
type runningController struct {
	name        string
	cancel      context.CancelFunc
	reconciling chan struct{} // closed on the first call of the callback
	done        chan struct{}
	err         error // set before done is closed
}

// startController runs c until stop. It is detached from ctx's cancellation
// (ctx only bounds start-up): the controller must outlive the start call and
// is stopped explicitly, after the tests, by Env.Stop.
func startController(ctx context.Context, c Controller, h Host) *runningController {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rc := &runningController{name: c.Name(), cancel: cancel, reconciling: make(chan struct{}), done: make(chan struct{})}
	var once sync.Once
	go func() {
		defer close(rc.done)
		h.Config = rest.CopyConfig(h.Config)
		rc.err = c.Run(rctx, h, func() { once.Do(func() { close(rc.reconciling) }) })
	}()
	return rc
}

// waitReconciling waits until the controller reconciles, fails, or timeout
// passes. Not reconciling in time is not an error: against a shared cluster
// another instance may hold the lease and do the work.
func (rc *runningController) waitReconciling(ctx context.Context, timeout time.Duration) (bool, error) {
	select {
	case <-rc.reconciling:
		return true, nil
	case <-rc.done:
		// select picks at random among ready cases: a controller that
		// reconciled and then returned at once has both channels closed.
		// It did start; stop reports its failure.
		select {
		case <-rc.reconciling:
			return true, nil
		default:
		}
		return false, fmt.Errorf("controller %s stopped during start-up: %w", rc.name, rc.err)
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(timeout):
		return false, nil
	}
}

// stop cancels the controller and waits up to timeout for it to return. A
// controller that returned an error before it was asked to stop failed
// while the tests ran, which the run must report: the tests' results are
// suspect.
func (rc *runningController) stop(timeout time.Duration) error {
	var failedEarly bool
	select {
	case <-rc.done:
		failedEarly = true
	default:
	}
	rc.cancel()
	select {
	case <-rc.done:
	case <-time.After(timeout):
		return fmt.Errorf("controller %s did not stop within %s", rc.name, timeout)
	}
	switch {
	case failedEarly && rc.err == nil:
		return fmt.Errorf("controller %s stopped on its own while the tests ran", rc.name)
	case failedEarly:
		return fmt.Errorf("controller %s failed while the tests ran: %w", rc.name, rc.err)
	case rc.err != nil && !errors.Is(rc.err, context.Canceled):
		return fmt.Errorf("controller %s: %w", rc.name, rc.err)
	}
	return nil
}
