package gkeemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/faultbudget"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
)

// Header marks every answer as coming from the emulator, so that nothing
// downstream (a log, a debugging human, a test) can mistake it for GKE.
const (
	Header      = "X-Gkeemu"
	HeaderValue = "emulator; not Google Kubernetes Engine"
)

// Default operation timing: quick enough for tests, slow enough that a
// client which does not wait for operations is caught (it sees PENDING).
const (
	DefaultPendingDuration = 20 * time.Millisecond
	DefaultRunningDuration = 100 * time.Millisecond
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// PendingDuration and RunningDuration are how long a new operation
	// stays PENDING and then RUNNING before it is DONE. Zero means the
	// defaults; a negative value means no time at all in that state.
	PendingDuration time.Duration
	RunningDuration time.Duration
	// AccessToken, when set, is the only bearer token accepted; otherwise
	// any non-empty bearer token is (GKE answers 401 without one).
	AccessToken string
	// BaseURL is used in selfLink and targetLink fields. By default it is
	// derived from each request (http://<Host>/).
	BaseURL string
	// Now is the clock; tests may replace it. Default time.Now.
	Now func() time.Time
	// Logf, when set, receives one line per request and per operation
	// state change.
	Logf func(format string, args ...any)
	// API, when set, is GKE's published container/v1 API (the discovery
	// document, package apidoc). Every request is then checked against it
	// first and refused as GKE's front end refuses it (400
	// INVALID_ARGUMENT naming the field) when its body has a field the
	// document does not have, a value of the wrong type or outside an
	// enum; every answer is checked too. Each departure, the emulator's own
	// included (an answer field the document lacks, a path routed to another
	// method than the document's), goes to Violation.
	API *apidoc.Document
	// Violation receives each departure from API (default: Logf).
	Violation func(apidoc.Violation)
}

// Server is the emulator. It is an http.Handler; serve it with
// httptest.NewServer or http.Serve. It is safe for concurrent use.
type Server struct {
	mu       sync.Mutex
	opts     Options
	clusters map[string]*clusterState // by projects/P/locations/L/clusters/C
	order    []string                 // cluster names in creation order
	ops      []*operation             // in start order
	faults   faultbudget.Set[*Fault]
	// opTriggers are operations to start before a request (see
	// StartClusterOperationBefore).
	opTriggers []opTrigger
	failNext   []*opFailure
	requests   map[string]int // by API method ID
	total      int
	seq        int64
}

// New returns an emulator with no clusters.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PendingDuration == 0 {
		opts.PendingDuration = DefaultPendingDuration
	}
	if opts.RunningDuration == 0 {
		opts.RunningDuration = DefaultRunningDuration
	}
	return &Server{
		opts:     opts,
		clusters: map[string]*clusterState{},
		requests: map[string]int{},
	}
}

// SetOperationDurations changes how long operations started from now on
// stay PENDING and RUNNING (negative: not at all).
func (s *Server) SetOperationDurations(pending, running time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.PendingDuration, s.opts.RunningDuration = pending, running
}

// Requests returns how many requests each API method received (method IDs
// as in GKE's documentation, e.g. "projects.locations.clusters.nodePools.get";
// unrouted requests count under "unknown").
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.requests)
}

// RequestCount is the number of requests received so far, all methods.
func (s *Server) RequestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// ResetRequests zeroes the request counters, so a test can measure one step.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = map[string]int{}
	s.total = 0
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// ServeHTTP answers one container/v1 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(Header, HeaderValue)
	if r.URL.Path == "/healthz" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok: gkeemu, a GKE container/v1 emulator\n")
		return
	}
	if s.opts.API != nil {
		tw := &teeWriter{ResponseWriter: w, status: http.StatusOK}
		defer s.checkAnswer(r, tw)
		w = tw
	}
	rt, rerr := parseRoute(r.Method, r.URL.Path)
	method := "unknown"
	if rerr == nil {
		method = rt.method
	}

	s.mu.Lock()
	s.requests[method]++
	s.total++
	fault := s.matchFault(r.Method, method)
	s.fireTriggers(method)
	s.mu.Unlock()
	s.logf("gkeemu: %s %s (%s)", r.Method, r.URL.Path, method)

	if fault != nil {
		if fault.Latency > 0 {
			select {
			case <-time.After(fault.Latency):
			case <-r.Context().Done():
				return
			}
		}
		switch {
		case fault.Reset == ResetBefore:
			resetConnection(w)
			return
		case fault.Reset == ResetAfter:
			s.serve(&discardWriter{}, r, rt, rerr)
			s.logf("gkeemu: %s %s served; resetting the connection instead of answering (injected)", r.Method, r.URL.Path)
			resetConnection(w)
			return
		case fault.Status != 0:
			writeError(w, fault.apiError())
			return
		}
	}
	s.serve(w, r, rt, rerr)
}

// serve answers a request that no fault stopped.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt route, rerr *apiError) {
	if rerr != nil {
		// A method GKE has and the emulator does not model is answered
		// UNIMPLEMENTED, which is honest; one GKE does not have at all is a
		// departure from the API.
		if s.opts.API != nil {
			if m, _ := s.opts.API.Match(r.Method, r.URL.Path); m == nil {
				s.violation(apidoc.Violation{Where: "request", Field: r.Method + " " + r.URL.Path, Unknown: true,
					Problem: "no method of the container/v1 discovery document has this HTTP verb and path"})
			}
		}
		writeError(w, rerr)
		return
	}
	if e := s.authenticate(r); e != nil {
		writeError(w, e)
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(io.LimitReader(r.Body, 4<<20)); err != nil {
			writeError(w, errorf("INVALID_ARGUMENT", "Reading the request body: %v", err))
			return
		}
	}

	if e := s.checkRequest(r, rt, body); e != nil {
		writeError(w, e)
		return
	}

	req := &request{body: body, route: rt}
	s.mu.Lock()
	now := s.opts.Now()
	s.advance(now)
	req.now = now
	out, e := s.dispatch(req)
	s.mu.Unlock()
	if e != nil {
		s.logf("gkeemu: %s %s -> %s", r.Method, r.URL.Path, e.Error())
		writeError(w, e)
		return
	}
	data, err := json.Marshal(out)
	if err != nil {
		writeError(w, errorf("INTERNAL", "gkeemu: encoding the answer: %v", err))
		return
	}
	// Links point at whoever was asked (this server's address as the
	// client used it), as GKE's point at container.googleapis.com.
	data = bytes.ReplaceAll(data, []byte(linkPlaceholder), []byte(s.baseURL(r)))
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(data)
}

// authenticate mirrors GKE's answer to a request without usable credentials.
func (s *Server) authenticate(r *http.Request) *apiError {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	tok = strings.TrimSpace(tok)
	if !ok || tok == "" {
		return errorf("UNAUTHENTICATED", "Request is missing required authentication credential. Expected OAuth 2 access "+
			"token, login cookie or other valid authentication credential.")
	}
	if s.opts.AccessToken != "" && tok != s.opts.AccessToken {
		return errorf("UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, "+
			"login cookie or other valid authentication credential.")
	}
	return nil
}

func (s *Server) baseURL(r *http.Request) string {
	if s.opts.BaseURL != "" {
		return strings.TrimSuffix(s.opts.BaseURL, "/") + "/"
	}
	if r == nil {
		return "http://gkeemu.invalid/"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}

// request is what a handler needs: the parsed route, the body and the time.
type request struct {
	route route
	body  []byte
	now   time.Time
}

// linkPlaceholder stands for the server's base URL in stored selfLink and
// targetLink fields; answers replace it with the address the client used,
// and the inspection methods with Options.BaseURL (or an .invalid host).
const linkPlaceholder = "https://gkeemu-base.invalid/"

// decode reads the JSON body into v. allowed, when non-nil, lists the
// top-level fields the emulator models; any other field is refused with
// UNIMPLEMENTED rather than silently ignored, so that a provider cannot
// pass a test while sending something the emulator does not check.
func (r *request) decode(v any, allowed ...string) *apiError {
	if len(r.body) == 0 {
		return errorf("INVALID_ARGUMENT", "The request has no body.")
	}
	if allowed != nil {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &top); err != nil {
			return errorf("INVALID_ARGUMENT", "Invalid JSON payload received. %v", err)
		}
		for k := range top {
			if !contains(allowed, k) {
				return errorf("UNIMPLEMENTED", "gkeemu (emulator) does not model the field %q of this request; "+
					"extend internal/testing/gkeemu before relying on it.", k)
			}
		}
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		return errorf("INVALID_ARGUMENT", "Invalid JSON payload received. %v", err)
	}
	return nil
}

// link is an API URL of a resource, in the zones/ form GKE uses in
// selfLink and targetLink fields.
func (r *request) link(project, location, rest string) string {
	return fmt.Sprintf("%sv1/projects/%s/zones/%s/%s", linkPlaceholder, project, location, rest)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clone deep-copies a generated container/v1 value through its JSON form,
// which is exactly what a client would get, so that callers (answers and
// the inspection methods) never share memory with the emulator's state.
func clone[T any](v *T) *T {
	return cloneBase(v, "")
}

// cloneBase is clone with the link placeholder replaced by base (kept when
// base is empty), for values handed to tests.
func cloneBase[T any](v *T, base string) *T {
	if v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if base != "" {
		data = bytes.ReplaceAll(data, []byte(linkPlaceholder), []byte(base))
	}
	if err != nil {
		panic(fmt.Sprintf("gkeemu: cloning %T: %v", v, err))
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		panic(fmt.Sprintf("gkeemu: cloning %T: %v", v, err))
	}
	return out
}
