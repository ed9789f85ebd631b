package gkeapi

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/api/container/v1"
)

// Do runs fn, which makes one GKE call, and runs it again for as long as GKE
// answers that the cluster is busy with another operation (IsClusterBusy),
// until the caller's context deadline. GKE runs one operation per cluster at
// a time, so two node pools in one apply (or a node pool next to an add-on
// change, or GKE's own auto-upgrade) routinely collide; waiting it out is
// what a human would do.
//
// Transient HTTP failures are already retried below, in the transport, so
// Do does not retry them again. Any other error is returned at once. When
// the deadline comes first, the error is a *ClusterBusyError wrapping GKE's
// last answer.
//
// fn should pass ctx to the call (.Context(ctx)) so that the call itself is
// bounded by the same deadline:
//
//	var op *container.Operation
//	err := c.Do(ctx, func() (err error) {
//		op, err = c.Service.Projects.Locations.Clusters.NodePools.Create(parent, req).Context(ctx).Do()
//		return err
//	})
func (c *Client) Do(ctx context.Context, fn func() error) error {
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		deadline = start.Add(DefaultBusyLimit)
	}
	var lastBusy error
	for attempt := 1; ; attempt++ {
		err := fn()
		if err != nil && lastBusy != nil && ctx.Err() != nil && !IsClusterBusy(err) {
			// The deadline ran out while a retry was in flight: what the
			// user needs to know is that the cluster stayed busy.
			return &ClusterBusyError{Attempts: attempt - 1, Waited: time.Since(start), Err: lastBusy}
		}
		if err == nil || !IsClusterBusy(err) {
			return err
		}
		lastBusy = err
		wait := jitter(c.busy.delay(attempt))
		if time.Until(deadline) < wait {
			return &ClusterBusyError{Attempts: attempt, Waited: time.Since(start), Err: err}
		}
		tflog.Info(ctx, "GKE cluster is busy with another operation; waiting to retry", map[string]any{
			"attempt": attempt,
			"wait":    wait.String(),
			"waited":  time.Since(start).Round(time.Second).String(),
			"message": statusMessage(err),
		})
		if serr := sleep(ctx, wait); serr != nil {
			return &ClusterBusyError{Attempts: attempt, Waited: time.Since(start), Err: err}
		}
	}
}

// RunOperation starts a mutation through Do (so a busy cluster is waited
// out) and then waits for the operation it returns.
func (c *Client) RunOperation(ctx context.Context, start func() (*container.Operation, error)) (*container.Operation, error) {
	var op *container.Operation
	err := c.Do(ctx, func() (err error) {
		op, err = start()
		return err
	})
	if err != nil {
		return nil, err
	}
	return c.WaitOperation(ctx, op)
}

// ClusterBusyError is returned by Do when the cluster was still busy with
// another operation at the caller's deadline. It wraps GKE's last answer, so
// errors.As(err, *googleapi.Error) and IsClusterBusy still work.
type ClusterBusyError struct {
	Attempts int
	Waited   time.Duration
	Err      error
}

func (e *ClusterBusyError) Error() string {
	return fmt.Sprintf("GKE cluster stayed busy with another operation for %s (%d attempts): %v",
		e.Waited.Round(time.Second), e.Attempts, e.Err)
}

func (e *ClusterBusyError) Unwrap() error { return e.Err }

func statusMessage(err error) string {
	if st, ok := statusOf(err); ok {
		return st.Message
	}
	return err.Error()
}
