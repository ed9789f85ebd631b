package gkeapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
)

const nodePoolName = "projects/p/locations/l/clusters/c/nodePools/np"

func setSize(ctx context.Context, c *Client) (*container.Operation, error) {
	return c.Service.Projects.Locations.Clusters.NodePools.
		SetSize(nodePoolName, &container.SetNodePoolSizeRequest{NodeCount: 3}).Context(ctx).Do()
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			writeAPIError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Quota exceeded")
			return
		}
		writeJSON(w, http.StatusOK, &container.Cluster{Name: "c"})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL) // backoff is 1 ms: any longer wait comes from Retry-After

	start := time.Now()
	getCluster(t, c)
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("retried after %s; Retry-After said 1s", waited)
	}
	if calls.Load() != 2 || c.RequestCount() != 2 {
		t.Errorf("server calls = %d, RequestCount = %d; want 2", calls.Load(), c.RequestCount())
	}
}

func TestRetry503ThenSuccessReplaysBody(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		if calls.Add(1) <= 2 {
			writeAPIError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "try later")
			return
		}
		writeJSON(w, http.StatusOK, &container.Operation{Name: "operation-1", Status: OperationDone})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)

	// A mutation: 503 means GKE did nothing, so it is retried too.
	if _, err := setSize(context.Background(), c); err != nil {
		t.Fatalf("SetSize: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("server saw %d attempts, want 3", len(bodies))
	}
	for i, b := range bodies {
		if !strings.Contains(b, `"nodeCount":3`) || b != bodies[0] {
			t.Errorf("attempt %d body = %q; every attempt must carry the same body", i+1, b)
		}
	}
}

func TestRetry500OnlyOnReads(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 || r.Method != http.MethodGet {
			writeAPIError(w, http.StatusInternalServerError, "INTERNAL", "boom")
			return
		}
		writeJSON(w, http.StatusOK, &container.Cluster{Name: "c"})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)

	getCluster(t, c)
	if calls.Load() != 2 {
		t.Errorf("GET: %d attempts, want 2", calls.Load())
	}

	calls.Store(0)
	_, err := setSize(context.Background(), c)
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != http.StatusInternalServerError {
		t.Fatalf("POST: err = %v, want the 500", err)
	}
	if calls.Load() != 1 {
		t.Errorf("POST: %d attempts; a 500 on a mutation must not be repeated", calls.Load())
	}
}

func TestRetryConnectionReset(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close with RST
			}
			conn.Close()
			return
		}
		writeJSON(w, http.StatusOK, &container.Operation{Name: "operation-1", Status: OperationDone})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)

	if _, err := setSize(context.Background(), c); err != nil {
		t.Fatalf("SetSize: %v", err)
	}
	if calls.Load() != 2 || c.RequestCount() != 2 {
		t.Errorf("server calls = %d, RequestCount = %d; want 2 (retried by our transport)", calls.Load(), c.RequestCount())
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeAPIError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "The service is currently unavailable.")
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL) // 4 attempts

	_, err := c.GetCluster(context.Background(), "projects/p/locations/l/clusters/c")
	st, ok := statusOf(err)
	if !ok || st.HTTPCode != http.StatusServiceUnavailable {
		t.Fatalf("err = %v, want GKE's 503", err)
	}
	if calls.Load() != 4 || st.Attempts != 4 {
		t.Errorf("calls = %d, recorded attempts = %d; want 4", calls.Load(), st.Attempts)
	}
	d := ErrorDiagnostic(err, MethodClustersGet, "projects/p/locations/l/clusters/c")
	if d.Summary() != "GKE server error" || !strings.Contains(d.Detail(), "after 4 attempts") {
		t.Errorf("diagnostic = %q / %q", d.Summary(), d.Detail())
	}
}

func TestRetryAfterBeyondDeadlineReturnsAtOnce(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "30")
		writeAPIError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Quota exceeded")
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Service.Projects.Locations.Clusters.Get("projects/p/locations/l/clusters/c").Context(ctx).Do()
	if time.Since(start) > time.Second {
		t.Errorf("waited %s although Retry-After outlives the deadline", time.Since(start))
	}
	if st, ok := statusOf(err); !ok || st.HTTPCode != http.StatusTooManyRequests {
		t.Errorf("err = %v; want GKE's 429, not a context error", err)
	}
	if calls.Load() != 1 {
		t.Errorf("calls = %d", calls.Load())
	}
}

func TestPerAttemptTimeoutRetriesReads(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // hang until the client gives up on this attempt
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		writeJSON(w, http.StatusOK, &container.Cluster{Name: "c"})
	}))
	defer srv.Close()
	c, err := NewService(context.Background(), Config{
		AccessToken: "t", Endpoint: srv.URL, AllowCredentialsOverHTTP: true, RequestTimeout: 100 * time.Millisecond,
	}, fast...)
	if err != nil {
		t.Fatal(err)
	}
	getCluster(t, c)
	if calls.Load() != 2 {
		t.Errorf("calls = %d, want 2", calls.Load())
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", "7")
	if d, ok := retryAfter(h, now); !ok || d != 7*time.Second {
		t.Errorf("seconds: %v %v", d, ok)
	}
	h.Set("Retry-After", now.Add(3*time.Second).Format(http.TimeFormat))
	if d, ok := retryAfter(h, now); !ok || d != 3*time.Second {
		t.Errorf("date: %v %v", d, ok)
	}
	h.Set("Retry-After", "soon")
	if _, ok := retryAfter(h, now); ok {
		t.Error("garbage accepted")
	}
}

// busyServer answers node pool creation with "busy" n times, then with an
// operation.
func busyServer(t *testing.T, n int32, code int, status, msg string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := calls.Add(1); n < 0 || k <= n {
			writeAPIError(w, code, status, msg)
			return
		}
		writeJSON(w, http.StatusOK, &container.Operation{Name: "operation-9", Status: OperationRunning})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func createPool(ctx context.Context, c *Client) (*container.Operation, error) {
	var op *container.Operation
	err := c.Do(ctx, func() (err error) {
		op, err = c.Service.Projects.Locations.Clusters.NodePools.
			Create("projects/p/locations/l/clusters/c", &container.CreateNodePoolRequest{NodePool: &container.NodePool{Name: "np"}}).
			Context(ctx).Do()
		return err
	})
	return op, err
}

func TestDoRetriesBusyClusterUntilSuccess(t *testing.T) {
	cases := []struct {
		name, status, msg string
		code              int
	}{
		{"400 upgrading", "FAILED_PRECONDITION", "Operation operation-1596064640049-1b03e177 is currently upgrading cluster c. Please wait and try again once it is done.", 400},
		{"400 incompatible", "FAILED_PRECONDITION", "Cluster is running incompatible operation operation-123.", 400},
		{"409 in progress", "ABORTED", "Operation already in progress on the cluster.", 409},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := busyServer(t, 2, tc.code, tc.status, tc.msg)
			c := newTestClient(t, srv.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			op, err := createPool(ctx, c)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			if op.Name != "operation-9" || calls.Load() != 3 {
				t.Errorf("op = %q after %d calls; want operation-9 after 3", op.Name, calls.Load())
			}
		})
	}
}

func TestDoBusyClusterUntilDeadline(t *testing.T) {
	srv, calls := busyServer(t, -1, 400, "FAILED_PRECONDITION",
		"Operation operation-1 is currently upgrading cluster c. Please wait and try again once it is done.")
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()

	start := time.Now()
	_, err := createPool(ctx, c)
	elapsed := time.Since(start)

	var be *ClusterBusyError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want *ClusterBusyError", err)
	}
	if !IsClusterBusy(err) {
		t.Error("IsClusterBusy must see through ClusterBusyError")
	}
	// The server may have counted one more call than the client saw
	// answered: the one in flight when the deadline ran out.
	if n := calls.Load(); be.Attempts < 3 || n < int32(be.Attempts) || n > int32(be.Attempts)+1 {
		t.Errorf("attempts = %d, server calls = %d", be.Attempts, n)
	}
	if elapsed < 200*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("gave up after %s; want close to the 300ms deadline", elapsed)
	}
	d := ErrorDiagnostic(err, MethodNodePoolsCreate, "projects/p/locations/l/clusters/c")
	if d.Summary() != "GKE cluster busy with another operation" ||
		!strings.Contains(d.Detail(), "Raise this resource's timeouts") ||
		!strings.Contains(d.Detail(), "is currently upgrading cluster c") {
		t.Errorf("diagnostic = %q\n%s", d.Summary(), d.Detail())
	}
}

// TestDoBusyClusterDeadlineDuringRetry: when the deadline runs out while a
// retry is in flight (here the third request hangs), the error is still the
// busy cluster, with the attempts that were answered, not a bare "context
// deadline exceeded" (seen under load, where a request can outlast the
// deadline's remainder).
func TestDoBusyClusterDeadlineDuringRetry(t *testing.T) {
	var calls atomic.Int32
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			writeAPIError(w, 400, "FAILED_PRECONDITION", "Operation operation-1 is currently upgrading cluster c. Please wait and try again once it is done.")
			return
		}
		select {
		case <-r.Context().Done():
		case <-hung:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hung) }) // runs first: lets the hung handler end
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	_, err := createPool(ctx, c)
	var be *ClusterBusyError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want *ClusterBusyError", err)
	}
	if be.Attempts != 2 || !strings.Contains(be.Error(), "is currently upgrading cluster c") {
		t.Errorf("attempts = %d, error = %v; want 2 answered attempts and the last busy answer", be.Attempts, be)
	}
}

func TestDoDoesNotRetryOtherErrors(t *testing.T) {
	cases := []struct {
		name, status, msg string
		code              int
	}{
		{"real precondition", "FAILED_PRECONDITION", "Cannot delete the only node pool of a Standard cluster.", 400},
		{"invalid argument", "INVALID_ARGUMENT", "Sandbox type GVISOR is currently only supported with COS_CONTAINERD.", 400},
		{"already exists", "ALREADY_EXISTS", "Already exists: projects/p/locations/l/clusters/c/nodePools/np.", 409},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := busyServer(t, 5, tc.code, tc.status, tc.msg)
			c := newTestClient(t, srv.URL)
			_, err := createPool(context.Background(), c)
			if err == nil || calls.Load() != 1 {
				t.Errorf("err = %v after %d calls; want the error after 1 call", err, calls.Load())
			}
		})
	}
}
