// Package faultproxy is a fault-injecting loopback proxy for acceptance
// tests: it sits between the provider and the Kubernetes API server, passes
// every request on with the test cluster's credentials, and fails or slows
// down the requests a test picks, as a flaky network, an overloaded API
// server or a restarting load balancer would:
//
//   - an HTTP status (429 with Retry-After, 500, 503, ...) with a Kubernetes
//     Status body, instead of forwarding the request (KindStatus);
//   - a connection reset before the request reaches the server (KindReset);
//   - a connection reset after the server has answered, so the request took
//     effect but its answer is lost (KindResetAfter);
//   - a delay before forwarding (KindDelay);
//   - a watch that is cut after a while, mid-stream (KindDropWatch).
//
// A Rule picks requests by HTTP method, path and whether they are watches,
// can let a number of matching requests through first, and applies to a
// number of them (or all); the proxy counts what it injected, per kind, so
// a test can show that the faults happened and the provider survived them.
//
// The proxy listens on 127.0.0.1 over plain HTTP, like `kubectl proxy`, and
// the provider is given no credentials for it (Kubeconfig writes such a
// kubeconfig); the proxy adds the test cluster's own credentials upstream.
// It is test tooling: nothing here ships in the provider.
package faultproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/faultbudget"
)

// Kind is what a rule does to a request it picks.
type Kind string

const (
	// KindStatus answers with Rule.Status (and Retry-After when
	// Rule.RetryAfter is set) without forwarding the request.
	KindStatus Kind = "status"
	// KindReset closes the client's connection with a TCP reset before
	// the request is forwarded: nothing reached the server.
	KindReset Kind = "reset"
	// KindResetAfter forwards the request, waits for the server's answer,
	// then resets the client's connection: the request took effect, its
	// answer is lost.
	KindResetAfter Kind = "reset-after-forward"
	// KindDelay waits Rule.Delay, then forwards the request.
	KindDelay Kind = "delay"
	// KindDropWatch forwards a request and cuts the response stream
	// Rule.Delay after it started (for a watch: a dropped watch). A
	// watch the client ends before then does not use up the rule.
	KindDropWatch Kind = "drop-watch"
)

// Rule picks requests and says what to do to them. The zero Rule matches
// every request and does nothing; set Kind.
type Rule struct {
	Kind Kind
	// Method is the HTTP method to match ("" matches every method).
	Method string
	// Path, when set, must match the request's URL path.
	Path *regexp.Regexp
	// Watch, when set, matches only watches (true) or only non-watches
	// (false).
	Watch *bool
	// Match, when set, must also accept the request (e.g. to leave dry
	// runs alone).
	Match func(*http.Request) bool
	// Skip is how many matching requests pass untouched before the rule
	// applies.
	Skip int
	// Times is how many matching requests (after Skip) the rule applies
	// to; 0 means 1, a negative value means every one until Clear.
	Times int
	// Status is the HTTP status of KindStatus (429, 500, 503, ...).
	Status int
	// RetryAfter, when positive, is sent with KindStatus as Retry-After
	// in whole seconds (rounded up).
	RetryAfter time.Duration
	// Delay is how long KindDelay waits and after how long KindDropWatch
	// cuts the stream.
	Delay time.Duration
	// AtEvent, when positive, makes KindDropWatch cut the stream instead
	// of passing on its AtEvent-th chunk (1: the first) and ignore Delay.
	// The API server writes and flushes each watch event on its own, so a
	// chunk is an event: the client loses the event it was waiting for
	// with the connection, the fault a wait must survive, whatever the
	// timing of the wait.
	AtEvent int

	budget faultbudget.Budget
}

// Hits is how many requests the rule has applied to so far.
func (r *Rule) Hits() int { return r.budget.Hits() }

// String describes the rule for test logs.
func (r *Rule) String() string {
	s := string(r.Kind)
	if r.Kind == KindStatus {
		s += " " + strconv.Itoa(r.Status)
		if r.RetryAfter > 0 {
			s += fmt.Sprintf(" (Retry-After %s)", r.RetryAfter)
		}
	}
	if r.Method != "" {
		s += " on " + r.Method
	} else {
		s += " on any method"
	}
	if r.Path != nil {
		s += " " + r.Path.String()
	}
	if r.Watch != nil {
		if *r.Watch {
			s += " (watches)"
		} else {
			s += " (not watches)"
		}
	}
	return s
}

func (r *Rule) matches(req *http.Request) bool {
	if r.Method != "" && r.Method != req.Method {
		return false
	}
	if r.Path != nil && !r.Path.MatchString(req.URL.Path) {
		return false
	}
	if r.Watch != nil && *r.Watch != isWatch(req) {
		return false
	}
	return r.Match == nil || r.Match(req)
}

// giveBack undoes one application: a KindDropWatch rule whose watch ended
// before the cut did nothing, so it stays for the next matching watch. A
// rule's Times then counts streams really cut, whatever the timing of the
// waits that open them.
func (r *Rule) giveBack() { r.budget.GiveBack() }

func isWatch(req *http.Request) bool {
	v := req.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// Proxy is a running fault-injecting proxy. Its methods are safe for
// concurrent use.
type Proxy struct {
	// URL is the proxy's address, http://127.0.0.1:<port>.
	URL string

	srv      *http.Server
	lis      net.Listener
	upstream *url.URL
	rt       http.RoundTripper
	rp       *httputil.ReverseProxy

	rules faultbudget.Set[*Rule]

	mu       sync.Mutex
	injected map[Kind]int
	requests int
}

// Start starts a proxy to the API server cfg describes, with cfg's
// credentials. Close stops it.
func Start(cfg *rest.Config) (*Proxy, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream transport: %w", err)
	}
	host := cfg.Host
	if !regexp.MustCompile(`^https?://`).MatchString(host) {
		host = "https://" + host
	}
	up, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream host %q: %w", cfg.Host, err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{
		URL:      "http://" + lis.Addr().String(),
		lis:      lis,
		upstream: up,
		rt:       rt,
		injected: map[Kind]int{},
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.Out.Host = up.Host
			pr.Out.Header.Del("Authorization")
		},
		Transport: rt,
		// Watches are streams: pass every event on at once.
		FlushInterval: -1,
		// A cut stream is the point, not news.
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(r.Context().Err(), context.Canceled) {
				return
			}
			writeStatus(w, http.StatusBadGateway, "faultproxy: upstream: "+err.Error(), 0)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(lis) }()
	return p, nil
}

// Close stops the proxy and cuts every open connection (watches too).
func (p *Proxy) Close() error { return p.srv.Close() }

// Inject adds rules; the first rule that matches a request and still
// applies decides what happens to it. It returns its argument, so a test
// can keep the rules and ask for their Hits.
func (p *Proxy) Inject(rules ...*Rule) []*Rule {
	for _, r := range rules {
		r.budget.Arm(r.Skip, r.Times)
	}
	p.rules.Add(rules...)
	return rules
}

// Clear removes every rule. The counts stay.
func (p *Proxy) Clear() { p.rules.Clear() }

// Injected is how many faults of each kind the proxy has injected (a
// KindDropWatch only when it cut a stream the client still read).
func (p *Proxy) Injected() map[Kind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Kind]int, len(p.injected))
	for k, v := range p.injected {
		out[k] = v
	}
	return out
}

// Requests is how many requests reached the proxy.
func (p *Proxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

func (p *Proxy) pick(req *http.Request) *Rule {
	r, ok := p.rules.Pick(func(r *Rule) bool { return r.matches(req) && r.budget.Take() })
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	if !ok {
		return nil
	}
	if r.Kind != KindDropWatch {
		// A cut stream is counted when it is cut (see ServeHTTP): a wait
		// may end the watch itself first.
		p.injected[r.Kind]++
	}
	return r
}

func (p *Proxy) count(k Kind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.injected[k]++
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rule := p.pick(req)
	if rule == nil {
		p.rp.ServeHTTP(w, req)
		return
	}
	switch rule.Kind {
	case KindStatus:
		_, _ = io.Copy(io.Discard, req.Body)
		writeStatus(w, rule.Status, fmt.Sprintf("faultproxy: injected %d", rule.Status), rule.RetryAfter)
	case KindReset:
		reset(w)
	case KindResetAfter:
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.Host = p.upstream.Scheme, p.upstream.Host, p.upstream.Host
		out.RequestURI = ""
		out.Header.Del("Authorization")
		resp, err := p.rt.RoundTrip(out)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		reset(w)
	case KindDelay:
		t := time.NewTimer(rule.Delay)
		defer t.Stop()
		select {
		case <-req.Context().Done():
			return
		case <-t.C:
		}
		p.rp.ServeHTTP(w, req)
	case KindDropWatch:
		// The reverse proxy aborts the response (closing the connection
		// mid-stream) when the upstream body fails, which is what a
		// dropped watch looks like to the client.
		if rule.AtEvent > 0 {
			cw := &cutWriter{ResponseWriter: w, at: rule.AtEvent}
			defer func() {
				if cw.cut {
					p.count(KindDropWatch)
					panic(http.ErrAbortHandler)
				}
				rule.giveBack()
				if v := recover(); v != nil {
					panic(v)
				}
			}()
			p.rp.ServeHTTP(cw, req)
			return
		}
		ctx, cancel := context.WithTimeout(req.Context(), rule.Delay)
		defer cancel()
		// Deferred: the reverse proxy panics with http.ErrAbortHandler
		// when it cuts the stream.
		defer func() {
			if req.Context().Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				p.count(KindDropWatch)
			} else {
				rule.giveBack()
			}
		}()
		p.rp.ServeHTTP(w, req.WithContext(ctx))
		panic(http.ErrAbortHandler)
	default:
		writeStatus(w, http.StatusInternalServerError, "faultproxy: unknown fault kind "+string(rule.Kind), 0)
	}
}

// cutWriter passes a response on until its at-th body write, which it
// refuses instead: the reverse proxy then stops copying and aborts the
// response. The status line and headers are flushed at once, so the client
// sees a watch that started and then broke, not a failed request.
type cutWriter struct {
	http.ResponseWriter
	at, writes int
	cut        bool
}

func (c *cutWriter) WriteHeader(code int) {
	c.ResponseWriter.WriteHeader(code)
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *cutWriter) Write(b []byte) (int, error) {
	c.writes++
	if c.writes >= c.at {
		c.cut = true
		return 0, errCut
	}
	return c.ResponseWriter.Write(b)
}

func (c *cutWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok && !c.cut {
		f.Flush()
	}
}

var errCut = errors.New("faultproxy: watch cut")

// reset closes the client's connection with a TCP RST (SO_LINGER 0), so the
// client sees "connection reset by peer".
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// writeStatus answers as the API server does: a metav1.Status body.
func writeStatus(w http.ResponseWriter, code int, msg string, retryAfter time.Duration) {
	reasons := map[int]string{
		http.StatusTooManyRequests:     "TooManyRequests",
		http.StatusInternalServerError: "InternalError",
		http.StatusServiceUnavailable:  "ServiceUnavailable",
		http.StatusGatewayTimeout:      "Timeout",
	}
	if retryAfter > 0 {
		secs := int((retryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"kind":       "Status",
		"apiVersion": "v1",
		"status":     "Failure",
		"message":    msg,
		"reason":     reasons[code],
		"code":       code,
	})
}

// Kubeconfig writes a kubeconfig for the proxy into dir (no credentials:
// the proxy adds the cluster's) and returns its path.
func (p *Proxy) Kubeconfig(dir string) (string, error) {
	const tmpl = `apiVersion: v1
kind: Config
clusters:
- name: faultproxy
  cluster:
    server: %s
contexts:
- name: faultproxy
  context:
    cluster: faultproxy
    user: faultproxy
users:
- name: faultproxy
  user: {}
current-context: faultproxy
`
	path := filepath.Join(dir, "faultproxy.kubeconfig")
	if err := os.WriteFile(path, fmt.Appendf(nil, tmpl, p.URL), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// NotDryRun is a Rule.Match that leaves server-side dry runs alone.
func NotDryRun(req *http.Request) bool { return req.URL.Query().Get("dryRun") == "" }

// Bool returns a pointer to b, for Rule.Watch.
func Bool(b bool) *bool { return &b }
