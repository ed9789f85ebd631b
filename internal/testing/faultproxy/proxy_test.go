package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// upstream is a stand-in API server: it counts requests, streams a line per
// 20 ms to watches until the client goes, and answers "ok" otherwise.
func upstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Header.Get("Authorization") != "Bearer upstream-token" {
			http.Error(w, "no credentials", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			for i := 0; ; i++ {
				if _, err := io.WriteString(w, `{"type":"ADDED"}`+"\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
		_, _ = io.WriteString(w, "ok "+r.Method+" "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func start(t *testing.T) (*Proxy, *atomic.Int64) {
	t.Helper()
	up, n := upstream(t)
	p, err := Start(&rest.Config{Host: up.URL, BearerToken: "upstream-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, n
}

// answer is what do read of a response (whose body it closed).
type answer struct {
	StatusCode int
	Header     http.Header
}

func do(t *testing.T, method, url string) (*answer, string, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader("{}"))
	// A fresh connection per request, so a reset affects only this one.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &answer{StatusCode: resp.StatusCode, Header: resp.Header}, string(b), nil
}

func TestForwardsWithUpstreamCredentials(t *testing.T) {
	p, n := start(t)
	resp, body, err := do(t, http.MethodGet, p.URL+"/api/v1/namespaces")
	if err != nil || resp.StatusCode != 200 || body != "ok GET /api/v1/namespaces" {
		t.Fatalf("got %v %q %v", resp, body, err)
	}
	if n.Load() != 1 || p.Requests() != 1 || len(p.Injected()) != 0 {
		t.Fatalf("upstream %d, proxy %d, injected %v", n.Load(), p.Requests(), p.Injected())
	}
}

func TestStatusWithRetryAfterSkipAndTimes(t *testing.T) {
	p, n := start(t)
	rule := p.Inject(&Rule{Kind: KindStatus, Status: 429, RetryAfter: 1500 * time.Millisecond,
		Method: http.MethodPatch, Path: regexp.MustCompile(`/configmaps/`), Skip: 1, Times: 2})[0]

	codes := []int{}
	for range 5 {
		resp, _, err := do(t, http.MethodPatch, p.URL+"/api/v1/namespaces/a/configmaps/x")
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "2" {
			t.Errorf("Retry-After = %q, want 2 (1.5 s rounded up)", resp.Header.Get("Retry-After"))
		}
	}
	// Other methods and paths never match.
	if resp, _, _ := do(t, http.MethodGet, p.URL+"/api/v1/namespaces/a/configmaps/x"); resp.StatusCode != 200 {
		t.Errorf("GET got %d", resp.StatusCode)
	}
	if resp, _, _ := do(t, http.MethodPatch, p.URL+"/api/v1/namespaces/a/secrets/x"); resp.StatusCode != 200 {
		t.Errorf("PATCH of a secret got %d", resp.StatusCode)
	}
	if want := []int{200, 429, 429, 200, 200}; !equal(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	if rule.Hits() != 2 || p.Injected()[KindStatus] != 2 || n.Load() != 5 {
		t.Errorf("hits %d, injected %v, upstream %d; want 2, 2, 5", rule.Hits(), p.Injected(), n.Load())
	}
}

func TestResetBeforeAndAfterForwarding(t *testing.T) {
	p, n := start(t)
	p.Inject(&Rule{Kind: KindReset, Method: http.MethodPost})
	_, _, err := do(t, http.MethodPost, p.URL+"/api/v1/namespaces")
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("want a connection reset, got %v", err)
	}
	if n.Load() != 0 {
		t.Fatalf("a reset before forwarding reached upstream (%d requests)", n.Load())
	}

	p.Inject(&Rule{Kind: KindResetAfter, Method: http.MethodPost})
	_, _, err = do(t, http.MethodPost, p.URL+"/api/v1/namespaces")
	if err == nil {
		t.Fatal("want a lost answer, got one")
	}
	if n.Load() != 1 {
		t.Fatalf("a reset after forwarding must reach upstream once, got %d", n.Load())
	}
	if got := p.Injected(); got[KindReset] != 1 || got[KindResetAfter] != 1 {
		t.Fatalf("injected %v", got)
	}
}

func TestDelay(t *testing.T) {
	p, _ := start(t)
	p.Inject(&Rule{Kind: KindDelay, Delay: 300 * time.Millisecond})
	begin := time.Now()
	if resp, _, err := do(t, http.MethodGet, p.URL+"/version"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v %v", resp, err)
	}
	if d := time.Since(begin); d < 300*time.Millisecond {
		t.Fatalf("answered after %s, want at least 300ms", d)
	}
}

func TestDropWatch(t *testing.T) {
	p, _ := start(t)
	p.Inject(&Rule{Kind: KindDropWatch, Watch: Bool(true), Delay: 200 * time.Millisecond})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL+"/api/v1/pods?watch=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	begin := time.Now()
	lines := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines++
	}
	d := time.Since(begin)
	if lines == 0 || d < 150*time.Millisecond || d > 5*time.Second {
		t.Fatalf("stream gave %d events and ended after %s (err %v); want events, then a cut at ~200ms", lines, d, sc.Err())
	}
	if sc.Err() == nil {
		t.Errorf("the cut stream ended cleanly; want an unexpected EOF")
	}
	if p.Injected()[KindDropWatch] != 1 {
		t.Errorf("injected %v, want one dropped watch", p.Injected())
	}
	// A non-watch GET is not affected.
	if resp, _, err := do(t, http.MethodGet, p.URL+"/api/v1/pods"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list got %v %v", resp, err)
	}
}

// A watch the client gives up before the cut does not use up the rule: the
// next watch is the one cut.
func TestDropWatchSpentOnlyOnACut(t *testing.T) {
	p, _ := start(t)
	rule := p.Inject(&Rule{Kind: KindDropWatch, Watch: Bool(true), Delay: 300 * time.Millisecond})[0]
	watch := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/pods?watch=true", nil)
		return http.DefaultClient.Do(req)
	}
	// The first watcher leaves once it has its first event.
	ctx, cancel := context.WithCancel(t.Context())
	resp, err := watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bufio.NewScanner(resp.Body).Scan() {
		t.Fatal("no event on the first watch")
	}
	cancel()
	_ = resp.Body.Close()
	// The proxy notices the client left; the rule is given back.
	deadline := time.Now().Add(5 * time.Second)
	for rule.Hits() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if rule.Hits() != 0 || p.Injected()[KindDropWatch] != 0 {
		t.Fatalf("after a watch the client ended itself: rule hits %d, injected %v; want 0 and none", rule.Hits(), p.Injected())
	}
	// The second watcher reads until the proxy cuts the stream.
	resp, err = watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
	}
	if sc.Err() == nil {
		t.Errorf("the second watch ended cleanly; want it cut")
	}
	if rule.Hits() != 1 || p.Injected()[KindDropWatch] != 1 {
		t.Errorf("rule hits %d, injected %v; want the second watch cut, once", rule.Hits(), p.Injected())
	}
}

// With AtEvent the stream starts (status and headers arrive) and breaks
// where the event would have been: the client gets no event at all.
func TestDropWatchAtEvent(t *testing.T) {
	p, _ := start(t)
	p.Inject(&Rule{Kind: KindDropWatch, Watch: Bool(true), AtEvent: 1})
	read := func() (int, int, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL+"/api/v1/pods?watch=true", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		lines := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines++
			if lines == 3 {
				return resp.StatusCode, lines, nil
			}
		}
		return resp.StatusCode, lines, sc.Err()
	}
	code, lines, err := read()
	if code != http.StatusOK || lines != 0 || err == nil {
		t.Fatalf("cut watch: status %d, %d events, read error %v; want 200, no event and an unexpected EOF", code, lines, err)
	}
	if p.Injected()[KindDropWatch] != 1 {
		t.Errorf("injected %v, want one dropped watch", p.Injected())
	}
	// The rule was for one watch: the next one streams.
	if code, lines, err := read(); code != http.StatusOK || lines != 3 || err != nil {
		t.Fatalf("next watch: status %d, %d events, error %v; want events", code, lines, err)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
