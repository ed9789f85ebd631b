package gkeapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/api/container/v1"
)

// Operation statuses of container/v1.
const (
	OperationPending  = "PENDING"
	OperationRunning  = "RUNNING"
	OperationDone     = "DONE"
	OperationAborting = "ABORTING"
)

// WaitOperation polls op until it is DONE and returns its final state. The
// interval grows from the poll backoff's Initial to its Max (1 s → 10 s by
// default), so short operations are noticed quickly and long ones (node pool
// creation takes minutes) cost few requests. Progress is logged at INFO when
// the status or progress changes.
//
// Errors:
//   - *OperationFailedError when the operation ended with an error;
//   - *OperationTimeoutError when ctx ended first (it wraps ctx.Err(), so
//     errors.Is(err, context.DeadlineExceeded) holds). The operation keeps
//     running in GKE; the error says so.
//
// The last known state of the operation is returned alongside errors.
func (c *Client) WaitOperation(ctx context.Context, op *container.Operation) (*container.Operation, error) {
	if op == nil {
		return nil, errors.New("GKE returned no operation to wait for")
	}
	name := op.Name
	if op.Status != OperationDone {
		// Only polling needs the full name; an operation that is already
		// DONE (GKE answers some quick mutations that way) does not.
		var err error
		if name, err = c.operationName(op); err != nil {
			return op, err
		}
	}
	start := time.Now()
	last := op
	lastLogged := ""
	logOperation(ctx, name, last, &lastLogged)
	for poll := 1; last.Status != OperationDone; poll++ {
		if err := sleep(ctx, c.poll.delay(poll)); err != nil {
			return last, &OperationTimeoutError{Name: name, Op: last, Waited: time.Since(start), Err: err}
		}
		got, err := c.Service.Projects.Locations.Operations.Get(name).Context(ctx).Do()
		if err != nil {
			if ctx.Err() != nil {
				return last, &OperationTimeoutError{Name: name, Op: last, Waited: time.Since(start), Err: ctx.Err()}
			}
			return last, fmt.Errorf("polling GKE operation %s: %w", name, err)
		}
		last = got
		logOperation(ctx, name, last, &lastLogged)
	}
	if operationFailed(last) {
		return last, &OperationFailedError{Name: name, Op: last}
	}
	return last, nil
}

// operationFailed reports whether a DONE operation ended in error. GKE sets
// Error; older answers put only a description in StatusMessage, which the
// API documents as "if an error has occurred".
func operationFailed(op *container.Operation) bool {
	if op.Error != nil && (op.Error.Code != 0 || op.Error.Message != "") {
		return true
	}
	return op.StatusMessage != ""
}

// operationName returns the projects/P/locations/L/operations/O name that
// Operations.Get needs. GKE's Operation.Name is usually only the short id
// ("operation-123-abc"), so the full name comes from SelfLink (which uses
// "zones/" even for regions) or from Location plus the client's project.
func (c *Client) operationName(op *container.Operation) (string, error) {
	if strings.HasPrefix(op.Name, "projects/") {
		return op.Name, nil
	}
	if i := strings.Index(op.SelfLink, "projects/"); i >= 0 {
		parts := strings.Split(op.SelfLink[i:], "/")
		if len(parts) == 6 && (parts[2] == "locations" || parts[2] == "zones") && parts[4] == "operations" {
			return fmt.Sprintf("projects/%s/locations/%s/operations/%s", parts[1], parts[3], parts[5]), nil
		}
	}
	loc := op.Location
	if loc == "" {
		loc = op.Zone
	}
	if op.Name == "" || loc == "" || c.Project == "" {
		return "", fmt.Errorf("cannot poll GKE operation %q: it has no self link, and its location (%q) or the provider project (%q) is unknown",
			op.Name, loc, c.Project)
	}
	return fmt.Sprintf("projects/%s/locations/%s/operations/%s", c.Project, loc, op.Name), nil
}

// logOperation logs the operation at INFO when what a human would see
// changed, and at DEBUG otherwise.
func logOperation(ctx context.Context, name string, op *container.Operation, lastLogged *string) {
	progress := progressSummary(op.Progress)
	fields := map[string]any{
		"operation": name,
		"type":      op.OperationType,
		"status":    op.Status,
		"target":    op.TargetLink,
	}
	if progress != "" {
		fields["progress"] = progress
	}
	if op.StatusMessage != "" {
		fields["status_message"] = op.StatusMessage
	}
	key := op.Status + "|" + progress + "|" + op.StatusMessage
	if key == *lastLogged {
		tflog.Debug(ctx, "GKE operation still in progress", fields)
		return
	}
	*lastLogged = key
	tflog.Info(ctx, "GKE operation progress", fields)
}

// progressSummary renders OperationProgress metrics as "name=value, ...",
// plus the current stage if GKE reports one.
func progressSummary(p *container.OperationProgress) string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Name != "" || p.Status != "" {
		parts = append(parts, strings.TrimSpace(p.Name+" "+p.Status))
	}
	metrics := make([]string, 0, len(p.Metrics))
	for _, m := range p.Metrics {
		if m == nil {
			continue
		}
		var v string
		switch {
		case m.StringValue != "":
			v = m.StringValue
		case m.DoubleValue != 0:
			v = strconv.FormatFloat(m.DoubleValue, 'g', -1, 64)
		default:
			v = strconv.FormatInt(m.IntValue, 10)
		}
		metrics = append(metrics, m.Name+"="+v)
	}
	sort.Strings(metrics)
	parts = append(parts, metrics...)
	for _, st := range p.Stages {
		if st != nil && st.Status == OperationRunning && st.Name != "" {
			parts = append(parts, "stage "+st.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// OperationFailedError is an operation that finished (DONE) in error.
type OperationFailedError struct {
	Name string
	Op   *container.Operation
}

func (e *OperationFailedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "GKE operation %s (%s", e.Name, e.Op.OperationType)
	if e.Op.TargetLink != "" {
		fmt.Fprintf(&b, " on %s", trimAPIPrefix(e.Op.TargetLink))
	}
	b.WriteString(") failed")
	if e.Op.Error != nil {
		if e.Op.Error.Code != 0 {
			fmt.Fprintf(&b, ": %s", rpcCodeName(e.Op.Error.Code))
		}
		if e.Op.Error.Message != "" {
			fmt.Fprintf(&b, ": %s", e.Op.Error.Message)
		}
	} else if e.Op.StatusMessage != "" {
		fmt.Fprintf(&b, ": %s", e.Op.StatusMessage)
	}
	for _, c := range append(append([]*container.StatusCondition{}, e.Op.ClusterConditions...), e.Op.NodepoolConditions...) {
		if c != nil && c.Message != "" && (e.Op.Error == nil || c.Message != e.Op.Error.Message) {
			fmt.Fprintf(&b, "; %s: %s", c.CanonicalCode, c.Message)
		}
	}
	return b.String()
}

// OperationTimeoutError is returned when the caller's context ended before
// the operation was DONE.
type OperationTimeoutError struct {
	Name   string
	Op     *container.Operation // last state seen
	Waited time.Duration
	Err    error // ctx.Err()
}

func (e *OperationTimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gave up waiting for GKE operation %s (%s) after %s: last status %s",
		e.Name, e.Op.OperationType, e.Waited.Round(time.Second), e.Op.Status)
	if p := progressSummary(e.Op.Progress); p != "" {
		fmt.Fprintf(&b, " (%s)", p)
	}
	if e.Op.StatusMessage != "" {
		fmt.Fprintf(&b, ": %s", e.Op.StatusMessage)
	}
	fmt.Fprintf(&b, "; the operation continues in GKE: %v", e.Err)
	return b.String()
}

func (e *OperationTimeoutError) Unwrap() error { return e.Err }

// rpcCodeName names a google.rpc.Code, as Operation.Error carries a number.
func rpcCodeName(code int64) string {
	names := []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
		"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}
	if code >= 0 && int(code) < len(names) {
		return names[code]
	}
	return "code " + strconv.FormatInt(code, 10)
}

// trimAPIPrefix shortens "https://container.googleapis.com/v1/projects/..."
// to "projects/...".
func trimAPIPrefix(link string) string {
	if i := strings.Index(link, "projects/"); i >= 0 {
		return link[i:]
	}
	return link
}
