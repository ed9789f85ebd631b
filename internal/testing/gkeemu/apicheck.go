package gkeemu

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
)

// violation reports a departure from the published API.
func (s *Server) violation(v apidoc.Violation) {
	if s.opts.Violation != nil {
		s.opts.Violation(v)
		return
	}
	s.logf("gkeemu: not as the container/v1 discovery document says: %s", v)
}

// Guard holds an emulator to GKE's published API. Every emulator this
// repository starts has one: emutest.Start's in tests (a departure fails
// the test), the demo stack's (the examples' tests fail on any) and
// cmd/gkeemu's (logged). Requests the discovery document does not allow are
// refused as GKE's front end refuses them, and every departure, the
// emulator's own answers included, is kept (see Violations) and passed to
// the report function given to NewGuard.
type Guard struct {
	// Revision is the discovery document's revision (e.g. "20261027").
	Revision string
	mu       sync.Mutex
	seen     []apidoc.Violation
	report   func(apidoc.Violation)
}

// NewGuard loads the container/v1 discovery document (apidoc.Load) and
// sets opts.API and opts.Violation so that the emulator built from opts is
// held to it. report, when not nil, is called with each departure as it
// happens.
func NewGuard(opts *Options, report func(apidoc.Violation)) (*Guard, error) {
	doc, err := apidoc.Load()
	if err != nil {
		return nil, fmt.Errorf("holding the GKE emulator to the published API: %w", err)
	}
	g := &Guard{Revision: doc.Revision, report: report}
	opts.API = doc
	opts.Violation = g.record
	return g, nil
}

func (g *Guard) record(v apidoc.Violation) {
	g.mu.Lock()
	g.seen = append(g.seen, v)
	g.mu.Unlock()
	if g.report != nil {
		g.report(v)
	}
}

// Violations returns every departure from the published API seen so far,
// in order.
func (g *Guard) Violations() []apidoc.Violation {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]apidoc.Violation(nil), g.seen...)
}

// checkRequest holds a routed request to the discovery document (Options.API).
// A request whose method the document does not route where the emulator
// does is the emulator's fault and only reported; a body or query the
// document does not allow is refused, as GKE's front end refuses it before
// any handler sees it.
func (s *Server) checkRequest(r *http.Request, rt route, body []byte) *apiError {
	if s.opts.API == nil {
		return nil
	}
	m, vs := s.opts.API.CheckRequest(r.Method, r.URL.Path, r.URL.Query(), body)
	if m != nil && m.ID != rt.method {
		s.violation(apidoc.Violation{Method: m.ID, Where: "request", Field: r.Method + " " + r.URL.Path,
			Problem: fmt.Sprintf("the emulator routes this request to %s, the document to %s", rt.method, m.ID)})
	}
	for _, v := range vs {
		s.violation(v)
	}
	if len(vs) == 0 {
		return nil
	}
	return frontEndRefusal(vs[0])
}

// frontEndRefusal words a request that does not fit the API as Google's
// JSON front end does: unknown names "Cannot find field", wrong values
// "Invalid value at", with the field in the proto's snake_case spelling.
func frontEndRefusal(v apidoc.Violation) *apiError {
	field := snakePath(v.Field)
	if v.Unknown && !strings.HasPrefix(v.Field, "?") && !strings.Contains(v.Field, " ") {
		// The unknown name as it was sent; the path to it as GKE spells it.
		name, parent := v.Field[strings.LastIndex(v.Field, ".")+1:], ""
		if i := strings.LastIndex(field, "."); i >= 0 {
			parent = field[:i]
		}
		if parent == "" {
			return invalidArgument(field, "Invalid JSON payload received. Unknown name %q: Cannot find field.", name)
		}
		return invalidArgument(field, "Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, parent)
	}
	if field == "" || strings.Contains(v.Field, " ") || strings.HasPrefix(v.Field, "?") {
		return errorf("INVALID_ARGUMENT", "Invalid request: %s.", v.Problem)
	}
	return invalidArgument(field, "Invalid value at '%s': %s.", field, v.Problem)
}

var camelRE = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// snakePath turns a JSON path (nodePool.config.sandboxConfig) into the
// proto field path GKE's messages name (node_pool.config.sandbox_config);
// map keys in brackets are kept as they are.
func snakePath(p string) string {
	var b strings.Builder
	for len(p) > 0 {
		i := strings.Index(p, `["`)
		if i < 0 {
			b.WriteString(strings.ToLower(camelRE.ReplaceAllString(p, "${1}_${2}")))
			break
		}
		b.WriteString(strings.ToLower(camelRE.ReplaceAllString(p[:i], "${1}_${2}")))
		j := strings.Index(p[i:], `"]`)
		if j < 0 {
			b.WriteString(p[i:])
			break
		}
		b.WriteString(p[i : i+j+2])
		p = p[i+j+2:]
	}
	return b.String()
}

// checkAnswer holds what the emulator answered to the document: a
// success against the method's response schema, an error against the
// error envelope of Google APIs.
func (s *Server) checkAnswer(r *http.Request, tw *teeWriter) {
	if tw.hijacked || r.URL.Path == "/healthz" {
		return
	}
	m, _ := s.opts.API.Match(r.Method, r.URL.Path)
	id := ""
	if m != nil {
		id = m.ID
	}
	var vs []apidoc.Violation
	if tw.status >= 300 {
		vs = apidoc.CheckError(id, tw.buf.Bytes())
	} else {
		vs = s.opts.API.CheckResponse(m, tw.buf.Bytes())
	}
	for _, v := range vs {
		s.violation(v)
	}
}

// teeWriter passes an answer on and keeps a copy to check.
type teeWriter struct {
	http.ResponseWriter
	status   int
	buf      bytes.Buffer
	hijacked bool
}

func (t *teeWriter) WriteHeader(code int) {
	t.status = code
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.buf.Write(p)
	return t.ResponseWriter.Write(p)
}

// Hijack lets injected connection resets through.
func (t *teeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := t.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("gkeemu: the connection cannot be hijacked")
	}
	t.hijacked = true
	return hj.Hijack()
}
