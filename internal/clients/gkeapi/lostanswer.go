package gkeapi

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/api/container/v1"
)

// A mutation whose connection breaks after it was sent may have been
// carried out by GKE with only the answer lost. The transport sends it
// again (a reset connection is retried for every method), and for a create
// the second attempt meets the object the first one made: 409
// ALREADY_EXISTS, which would fail the apply and leave the object outside
// the state. WithLostAnswerRecord lets a resource see that this happened to
// one of its own requests, and FindOperation finds the operation that the
// lost request started, so the create can wait for it and go on: the
// object is created once, and recorded.

type lostAnswerKey struct{}

// WithLostAnswerRecord returns a context that records whether a mutation
// (not GET or HEAD) sent with it lost its connection after being sent.
func WithLostAnswerRecord(ctx context.Context) (context.Context, *atomic.Bool) {
	lost := new(atomic.Bool)
	return context.WithValue(ctx, lostAnswerKey{}, lost), lost
}

func markLostAnswer(ctx context.Context) {
	if lost, ok := ctx.Value(lostAnswerKey{}).(*atomic.Bool); ok {
		lost.Store(true)
	}
}

// operationClockSkew is how much earlier than our own clock's start of the
// request GKE may have stamped the operation's startTime.
const operationClockSkew = time.Minute

// FindOperation returns the most recent operation of type opType (such as
// "CREATE_NODE_POOL") on target (a resource name such as
// projects/P/locations/L/clusters/C/nodePools/N, compared from "clusters/"
// on, since GKE's links may say zones/ for locations/) that GKE started at
// or after since (less operationClockSkew), or nil when there is none.
func (c *Client) FindOperation(ctx context.Context, location, opType, target string, since time.Time) (*container.Operation, error) {
	resp, err := c.Service.Projects.Locations.Operations.List(location).Context(ctx).Do()
	if err != nil {
		return nil, fmt.Errorf("listing the operations of %s: %w", location, err)
	}
	suffix := target
	if i := strings.Index(target, "/clusters/"); i >= 0 {
		suffix = target[i:]
	}
	var found *container.Operation
	var foundAt time.Time
	for _, op := range resp.Operations {
		if op.OperationType != opType || !strings.HasSuffix(op.TargetLink, suffix) {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, op.StartTime)
		if err != nil || at.Before(since.Add(-operationClockSkew)) {
			continue
		}
		if found == nil || at.After(foundAt) {
			found, foundAt = op, at
		}
	}
	return found, nil
}
