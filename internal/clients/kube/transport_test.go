package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scripted is an API server stand-in answering with a fixed sequence of
// status codes (the last one repeats) and recording what it received.
type scripted struct {
	mu       sync.Mutex
	codes    []int
	header   http.Header // added to every non-2xx answer
	requests []time.Time
	bodies   []string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, time.Now())
	s.bodies = append(s.bodies, string(body))
	code := s.codes[min(n, len(s.codes)-1)]
	s.mu.Unlock()
	if code >= 300 {
		for k, v := range s.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"message":"scripted"}`, code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// answer is what do saw of a response; the body is already read and closed.
type answer struct {
	StatusCode int
	Header     http.Header
}

// do sends one request through WrapTransport.
func do(t *testing.T, ctx context.Context, method, url, body string) (*answer, error) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body) // gives the request a GetBody
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := WrapTransport(http.DefaultTransport).RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return &answer{StatusCode: resp.StatusCode, Header: resp.Header}, nil
}

// TestTransport_429RetryAfterThroughClientGo goes through the whole client
// stack: a 429 with Retry-After: 1 is retried once after a second, and
// client-go's own Retry-After loop does not add attempts on top.
func TestTransport_429RetryAfterThroughClientGo(t *testing.T) {
	srv := &scripted{codes: []int{429, 200}, header: http.Header{"Retry-After": {"1"}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := NewClient(context.Background(), Config{Host: ts.URL, Token: "t", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x"); err != nil {
		t.Fatal(err)
	}
	if n := srv.count(); n != 2 {
		t.Fatalf("server saw %d requests, want 2", n)
	}
	if gap := srv.requests[1].Sub(srv.requests[0]); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, want Retry-After's 1s honoured", gap)
	}
}

func TestTransport_exhaustedRetriesAreNotRetriedAgainByClientGo(t *testing.T) {
	fastRetries(t)
	srv := &scripted{codes: []int{503}, header: http.Header{"Retry-After": {"0"}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := NewClient(context.Background(), Config{Host: ts.URL, Token: "t", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x")
	if err == nil {
		t.Fatal("want the final 503")
	}
	if n := srv.count(); n != defaultRetryPolicy.maxAttempts {
		t.Errorf("server saw %d requests, want exactly %d (no second retry loop)", n, defaultRetryPolicy.maxAttempts)
	}
}

func TestTransport_retries(t *testing.T) {
	fastRetries(t)
	tests := []struct {
		name     string
		method   string
		body     string
		codes    []int
		attempts int
		status   int
	}{
		{"GET 503 then success", http.MethodGet, "", []int{503, 200}, 2, 200},
		{"GET 502, 504 then success", http.MethodGet, "", []int{502, 504, 200}, 3, 200},
		{"GET 500 then success", http.MethodGet, "", []int{500, 200}, 2, 200},
		{"PATCH 503 then success, body replayed", http.MethodPatch, `{"a":1}`, []int{503, 200}, 2, 200},
		{"POST 503 is not retried", http.MethodPost, `{"a":1}`, []int{503, 200}, 1, 503},
		{"POST 500 is not retried", http.MethodPost, `{"a":1}`, []int{500, 200}, 1, 500},
		{"POST 429 is retried", http.MethodPost, `{"a":1}`, []int{429, 200}, 2, 200},
		{"404 is not retried", http.MethodGet, "", []int{404, 200}, 1, 404},
		{"409 is not retried", http.MethodPatch, `{}`, []int{409, 200}, 1, 409},
		{"attempts are capped", http.MethodGet, "", []int{503}, defaultRetryPolicy.maxAttempts, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &scripted{codes: tt.codes}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			resp, err := do(t, context.Background(), tt.method, ts.URL+"/api/v1/namespaces/default/configmaps/x", tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || srv.count() != tt.attempts {
				t.Errorf("status %d after %d attempts, want %d after %d", resp.StatusCode, srv.count(), tt.status, tt.attempts)
			}
			for i, b := range srv.bodies {
				if b != tt.body {
					t.Errorf("attempt %d sent body %q, want %q", i+1, b, tt.body)
				}
			}
		})
	}
}

func TestTransport_retryAfterHTTPDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"3", 3 * time.Second, true},
		{now.Add(2 * time.Second).Format(http.TimeFormat), 2 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"soon", 0, false},
		{"-1", 0, false},
	} {
		got, ok := retryAfter(&http.Response{Header: http.Header{"Retry-After": {tt.header}}}, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Retry-After %q = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}

	// And end to end, with a date one second ahead.
	srv := &scripted{codes: []int{429, 200}, header: http.Header{"Retry-After": {time.Now().Add(1500 * time.Millisecond).UTC().Format(http.TimeFormat)}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	if _, err := do(t, context.Background(), http.MethodGet, ts.URL+"/api/v1/namespaces", ""); err != nil {
		t.Fatal(err)
	}
	if srv.count() != 2 || srv.requests[1].Sub(srv.requests[0]) < 300*time.Millisecond {
		t.Errorf("HTTP-date Retry-After not honoured: %d requests", srv.count())
	}
}

func TestTransport_stripsRetryAfterOfFinalAnswer(t *testing.T) {
	srv := &scripted{codes: []int{503}, header: http.Header{"Retry-After": {"1"}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, err := do(t, context.Background(), http.MethodPost, ts.URL+"/api/v1/namespaces/default/configmaps", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Retry-After") != "" {
		t.Error("a POST 503 kept its Retry-After: client-go would resend it")
	}
}

func TestTransport_respectsContext(t *testing.T) {
	srv := &scripted{codes: []int{429, 200}, header: http.Header{"Retry-After": {"30"}}}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	// A deadline shorter than Retry-After: hand back the 429 at once.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := do(t, ctx, http.MethodGet, ts.URL+"/api/v1/namespaces", "")
	if err != nil || resp.StatusCode != 429 || time.Since(start) > time.Second {
		t.Errorf("got %v, %v after %v; want the 429 without waiting", resp, err, time.Since(start))
	}

	// Cancelled while backing off: return promptly with the context error.
	fastRetries(t)
	defaultRetryPolicy.baseDelay, defaultRetryPolicy.maxDelay = time.Minute, time.Minute
	srv2 := &scripted{codes: []int{503}}
	ts2 := httptest.NewServer(srv2)
	defer ts2.Close()
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	start = time.Now()
	_, err = do(t, ctx2, http.MethodGet, ts2.URL+"/api/v1/namespaces", "")
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Errorf("got %v after %v; want context.Canceled promptly", err, time.Since(start))
	}
}

func TestTransport_bodyThatCannotBeReplayed(t *testing.T) {
	fastRetries(t)
	srv := &scripted{codes: []int{503, 200}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPut, ts.URL+"/api/v1/namespaces/x", io.NopCloser(bytes.NewBufferString("{}")))
	req.GetBody = nil
	resp, err := WrapTransport(http.DefaultTransport).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || srv.count() != 1 {
		t.Errorf("a body without GetBody was retried: %d requests", srv.count())
	}
}

// failing is a RoundTripper that fails with err the first n times.
type failing struct {
	err   error
	n     int32
	calls atomic.Int32
}

func (f *failing) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.calls.Add(1) <= f.n {
		return nil, f.err
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

func TestTransport_connectionErrors(t *testing.T) {
	fastRetries(t)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name   string
		method string
		err    error
		calls  int32
		fails  bool
	}{
		{"refused GET is retried", http.MethodGet, refused, 2, false},
		{"refused POST is retried (nothing was sent)", http.MethodPost, refused, 2, false},
		{"reset GET is retried", http.MethodGet, reset, 2, false},
		{"reset POST is not retried (it may have been processed)", http.MethodPost, reset, 1, true},
		{"other errors are not retried", http.MethodGet, errors.New("boom"), 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &failing{err: tt.err, n: 1}
			var body io.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader("{}")
			}
			req, _ := http.NewRequest(tt.method, "http://127.0.0.1:1/api/v1/namespaces", body)
			resp, err := WrapTransport(f).RoundTrip(req)
			if (err != nil) != tt.fails || f.calls.Load() != tt.calls {
				t.Errorf("err %v after %d calls; want failure=%v after %d", err, f.calls.Load(), tt.fails, tt.calls)
			}
			if resp != nil {
				resp.Body.Close()
			}
		})
	}
}

func TestTransport_backoffGrowsWithJitterAndCap(t *testing.T) {
	tr := &apiTransport{policy: retryPolicy{maxAttempts: 10, baseDelay: 100 * time.Millisecond, maxDelay: time.Second}}
	for attempt, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 9: time.Second} {
		for range 20 {
			d := tr.backoff(attempt)
			if d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
}

// TestTransport_logsWithoutSecrets checks the TRACE line has what a user
// debugging needs and nothing that authenticates.
func TestTransport_logsWithoutSecrets(t *testing.T) {
	fastRetries(t)
	srv := &scripted{codes: []int{503, 200}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)

	c, err := NewClient(ctx, Config{Host: ts.URL, Token: "super-secret-token", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x"); err != nil {
		t.Fatal(err)
	}
	entries, err := tflogtest.MultilineJSONDecode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var traces []map[string]any
	for _, e := range entries {
		if e["@message"] == "Kubernetes API request" {
			traces = append(traces, e)
		}
	}
	if len(traces) != 2 {
		t.Fatalf("want one TRACE line per attempt, got %d: %s", len(traces), buf.String())
	}
	last := traces[1]
	if last["@level"] != "trace" || last["http_method"] != "GET" || last["http_path"] != "/api/v1/namespaces/default/configmaps/x" ||
		last["http_status"] != float64(200) || last["attempt"] != float64(2) || last["duration_ms"] == nil {
		t.Errorf("unexpected log entry %v", last)
	}
	if strings.Contains(buf.String(), "super-secret-token") || strings.Contains(strings.ToLower(buf.String()), "authorization") {
		t.Errorf("the log holds credentials: %s", buf.String())
	}
}
