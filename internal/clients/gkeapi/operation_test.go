package gkeapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/container/v1"
)

// opServer serves POST .../nodePools with start and every operation GET
// with the next element of polls (repeating the last one).
type opServer struct {
	*httptest.Server
	mu       sync.Mutex
	polls    []*container.Operation
	pollN    int
	getPaths []string
}

func newOpServer(t *testing.T, start *container.Operation, polls ...*container.Operation) *opServer {
	t.Helper()
	s := &opServer{polls: polls}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.Method == http.MethodPost {
			writeJSON(w, http.StatusOK, start)
			return
		}
		s.getPaths = append(s.getPaths, r.URL.Path)
		op := s.polls[min(s.pollN, len(s.polls)-1)]
		s.pollN++
		writeJSON(w, http.StatusOK, op)
	}))
	t.Cleanup(s.Close)
	return s
}

func startCreate(c *Client) func() (*container.Operation, error) {
	return func() (*container.Operation, error) {
		return c.Service.Projects.Locations.Clusters.NodePools.
			Create("projects/p/locations/us-central1/clusters/c", &container.CreateNodePoolRequest{NodePool: &container.NodePool{Name: "np"}}).
			Do()
	}
}

func TestWaitOperationPendingRunningDone(t *testing.T) {
	selfLink := "https://container.googleapis.com/v1/projects/123/zones/us-central1/operations/operation-1"
	srv := newOpServer(t,
		&container.Operation{Name: "operation-1", SelfLink: selfLink, OperationType: "CREATE_NODE_POOL", Status: OperationPending},
		&container.Operation{Name: "operation-1", SelfLink: selfLink, OperationType: "CREATE_NODE_POOL", Status: OperationRunning,
			Progress: &container.OperationProgress{Metrics: []*container.Metric{{Name: "NODES_DONE", IntValue: 1}, {Name: "NODES_TOTAL", IntValue: 3}}}},
		&container.Operation{Name: "operation-1", SelfLink: selfLink, OperationType: "CREATE_NODE_POOL", Status: OperationRunning},
		&container.Operation{Name: "operation-1", SelfLink: selfLink, OperationType: "CREATE_NODE_POOL", Status: OperationDone},
	)
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	op, err := c.RunOperation(ctx, startCreate(c))
	if err != nil {
		t.Fatalf("RunOperation: %v", err)
	}
	if op.Status != OperationDone {
		t.Errorf("status = %s", op.Status)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.getPaths) != 3 {
		t.Errorf("polled %d times, want 3", len(srv.getPaths))
	}
	// The self link's zones/ form becomes the locations/ name.
	if want := "/v1/projects/123/locations/us-central1/operations/operation-1"; srv.getPaths[0] != want {
		t.Errorf("polled %q, want %q", srv.getPaths[0], want)
	}
}

func TestWaitOperationDoneWithError(t *testing.T) {
	srv := newOpServer(t, nil,
		&container.Operation{Name: "operation-2", Location: "us-central1", OperationType: "CREATE_NODE_POOL", Status: OperationDone,
			TargetLink: "https://container.googleapis.com/v1/projects/p/locations/us-central1/clusters/c/nodePools/np",
			Error:      &container.Status{Code: 9, Message: "gVisor node pools require image type COS_CONTAINERD."}},
	)
	c := newTestClient(t, srv.URL)
	// No self link: the name is built from Location and the client's project.
	op, err := c.WaitOperation(context.Background(),
		&container.Operation{Name: "operation-2", Location: "us-central1", OperationType: "CREATE_NODE_POOL", Status: OperationRunning})

	var fe *OperationFailedError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want *OperationFailedError", err)
	}
	for _, want := range []string{"operation-2", "CREATE_NODE_POOL", "FAILED_PRECONDITION", "COS_CONTAINERD", "clusters/c/nodePools/np"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if op == nil || op.Status != OperationDone {
		t.Errorf("op = %+v; the final state must be returned with the error", op)
	}
	srv.mu.Lock()
	if srv.getPaths[0] != "/v1/projects/p/locations/us-central1/operations/operation-2" {
		t.Errorf("polled %q", srv.getPaths[0])
	}
	srv.mu.Unlock()
	d := ErrorDiagnostic(err, MethodNodePoolsCreate, "projects/p/locations/us-central1/clusters/c")
	if d.Summary() != "GKE operation failed" || !strings.Contains(d.Detail(), "COS_CONTAINERD") ||
		!strings.Contains(d.Detail(), "Request: projects.locations.clusters.nodePools.create") {
		t.Errorf("diagnostic = %q\n%s", d.Summary(), d.Detail())
	}
}

func TestWaitOperationTimeout(t *testing.T) {
	srv := newOpServer(t, nil,
		&container.Operation{Name: "projects/p/locations/l/operations/operation-3", OperationType: "UPGRADE_NODES", Status: OperationRunning,
			Progress: &container.OperationProgress{Metrics: []*container.Metric{{Name: "NODES_DONE", IntValue: 2}}}},
	)
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()

	start := time.Now()
	_, err := c.WaitOperation(ctx, &container.Operation{Name: "projects/p/locations/l/operations/operation-3", Status: OperationPending})
	if time.Since(start) > 2*time.Second {
		t.Errorf("returned after %s", time.Since(start))
	}
	var te *OperationTimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want *OperationTimeoutError wrapping DeadlineExceeded", err)
	}
	for _, want := range []string{"operation-3", "UPGRADE_NODES", "last status RUNNING", "NODES_DONE=2", "continues in GKE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	d := ErrorDiagnostic(err, MethodNodePoolsUpdate, "projects/p/locations/l/clusters/c/nodePools/np")
	if d.Summary() != "Timed out waiting for GKE operation" || !strings.Contains(d.Detail(), "timeouts") {
		t.Errorf("diagnostic = %q\n%s", d.Summary(), d.Detail())
	}
}

func TestWaitOperationAlreadyDoneDoesNotPoll(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	if _, err := c.WaitOperation(context.Background(), &container.Operation{Name: "operation-4", Status: OperationDone}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Errorf("polled %d times", calls.Load())
	}
}

func TestOperationNameNeedsALocation(t *testing.T) {
	c := &Client{}
	if _, err := c.operationName(&container.Operation{Name: "operation-5"}); err == nil ||
		!strings.Contains(err.Error(), "operation-5") {
		t.Errorf("err = %v", err)
	}
}

func TestBackoffIsCapped(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 10 * time.Second}
	got := []time.Duration{b.delay(1), b.delay(2), b.delay(3), b.delay(4), b.delay(5), b.delay(50)}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("delay(%d) = %s, want %s", i+1, got[i], want[i])
		}
	}
}
