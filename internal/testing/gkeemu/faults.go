package gkeemu

import (
	"net"
	"net/http"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/faultbudget"
)

// Fault is an injected failure or delay. A request matches when its API
// method (one of the Method constants; "" matches every method) and HTTP
// method ("" matches all) match. The first matching fault with hits left
// applies: the request waits Latency, then, if Status is set, gets that
// HTTP status with a Google-shaped error body instead of being served, or,
// if Reset is set, has its connection reset (before or after it is
// served).
type Fault struct {
	API        string // e.g. gkeapi.MethodNodePoolsCreate
	HTTPMethod string // e.g. "POST"
	// Status is 429 (RESOURCE_EXHAUSTED), 503 (UNAVAILABLE), 500 (INTERNAL)
	// or any other HTTP status; 0 means latency only.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header (in whole
	// seconds, rounded up), as Google's front end does on 429 and 503.
	RetryAfter time.Duration
	Latency    time.Duration
	// Times is how many matching requests the fault applies to; 0 means 1,
	// a negative value means every one until ClearFaults.
	Times int
	// Message replaces the default error message.
	Message string
	// Reset resets the TCP connection instead of answering (Status is
	// then ignored): ResetBefore without serving the request, as a load
	// balancer dropping it; ResetAfter once the request has been served
	// (the change is made, the answer is lost), the case that makes a
	// retried create meet its own object.
	Reset ResetMode

	budget faultbudget.Budget
}

// ResetMode says when a Fault resets the connection.
type ResetMode int

const (
	// NoReset answers normally.
	NoReset ResetMode = iota
	// ResetBefore resets the connection without serving the request.
	ResetBefore
	// ResetAfter serves the request, then resets the connection instead
	// of sending the answer.
	ResetAfter
)

// Hits is how many requests the fault has applied to so far.
func (f *Fault) Hits() int { return f.budget.Hits() }

// InjectFault adds a fault and returns it, so the test can ask for Hits.
func (s *Server) InjectFault(f *Fault) *Fault {
	f.budget.Arm(0, f.Times)
	s.faults.Add(f)
	return f
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() { s.faults.Clear() }

// matchFault picks (and consumes one hit of) the fault for a request.
// Called with s.mu held.
func (s *Server) matchFault(httpMethod, api string) *Fault {
	f, _ := s.faults.Pick(func(f *Fault) bool {
		return (f.API == "" || f.API == api) && (f.HTTPMethod == "" || f.HTTPMethod == httpMethod) && f.budget.Take()
	})
	return f
}

func (f *Fault) apiError() *apiError {
	e := &apiError{message: f.Message, retryAfter: f.RetryAfter}
	switch f.Status {
	case 429:
		e.status = "RESOURCE_EXHAUSTED"
		if e.message == "" {
			e.message = "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service " +
				"'container.googleapis.com' (injected by gkeemu)."
		}
		e.details = []map[string]any{{
			"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": "RATE_LIMIT_EXCEEDED",
			"domain": "googleapis.com",
			"metadata": map[string]any{
				"service":     "container.googleapis.com",
				"quota_limit": "RequestsPerMinutePerProject",
			},
		}}
	case 503:
		e.status = "UNAVAILABLE"
		if e.message == "" {
			e.message = "The service is currently unavailable (injected by gkeemu)."
		}
	case 500:
		e.status = "INTERNAL"
		if e.message == "" {
			e.message = "Internal error encountered (injected by gkeemu)."
		}
	default:
		e.status = httpStatusName(f.Status)
		if e.message == "" {
			e.message = "Injected failure (gkeemu)."
		}
	}
	return e
}

func httpStatusName(code int) string {
	for name, c := range canonicalCodes {
		if c.http == code && name != "FAILED_PRECONDITION" && name != "OUT_OF_RANGE" && name != "ABORTED" && name != "INTERNAL" {
			return name
		}
	}
	return "UNKNOWN"
}

// resetConnection closes the client's connection with a TCP reset (linger
// 0), so the client sees "connection reset by peer", not a clean close.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // HTTP/2: the server aborts the stream
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// discardWriter is where a ResetAfter request's answer goes.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
