package kube

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Request counters are process-wide on purpose: a benchmark or acceptance
// test measures what the provider process as a whole sent, whichever
// provider instance or resource sent it. They count logical requests (one
// per call into the transport, however many attempts it took); retries are
// counted separately by RetryCount.
var (
	// countersMu guards the map, not the counters: after the first request
	// of a kind, counting is a read lock and an atomic add.
	countersMu    sync.RWMutex
	requestCounts = map[string]*atomic.Int64{}
	requestTotal  atomic.Int64
	retryTotal    atomic.Int64
	writeTotal    atomic.Int64
)

// WriteCount returns how many requests could have changed something in the
// cluster (POST, PUT, PATCH, DELETE that are not dry runs) since the process
// started or since the last ResetRequestCounts: tests assert that checks
// which must not write sent none.
func WriteCount() int64 { return writeTotal.Load() }

// RequestCount returns how many requests were sent since the process started
// or since the last ResetRequestCounts.
func RequestCount() int64 { return requestTotal.Load() }

// RetryCount returns how many extra attempts the transport made.
func RetryCount() int64 { return retryTotal.Load() }

// RequestCounts returns a snapshot of the request counters, keyed by method
// and resource path pattern, e.g.
//
//	"GET /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes/{name}"
//	"PATCH /api/v1/namespaces/{namespace}/configmaps/{name}"
//	"WATCH /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxwarmpools"
//
// A GET with watch=true counts as WATCH: it is one long-lived stream, not a
// read. A GET of a collection is told apart from a GET of one object by the
// missing {name}.
func RequestCounts() map[string]int64 {
	countersMu.RLock()
	defer countersMu.RUnlock()
	out := make(map[string]int64, len(requestCounts))
	for k, v := range requestCounts {
		if n := v.Load(); n > 0 {
			out[k] = n
		}
	}
	return out
}

// ResetRequestCounts sets every counter back to zero.
func ResetRequestCounts() {
	countersMu.Lock()
	clear(requestCounts)
	countersMu.Unlock()
	requestTotal.Store(0)
	retryTotal.Store(0)
	writeTotal.Store(0)
}

func countRequest(req *http.Request) {
	requestTotal.Add(1)
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if req.URL.Query().Get("dryRun") != metav1.DryRunAll {
			writeTotal.Add(1)
		}
	}
	k := requestKey(req)
	countersMu.RLock()
	n := requestCounts[k]
	countersMu.RUnlock()
	if n == nil {
		countersMu.Lock()
		if n = requestCounts[k]; n == nil {
			n = new(atomic.Int64)
			requestCounts[k] = n
		}
		countersMu.Unlock()
	}
	n.Add(1)
}

func requestKey(req *http.Request) string {
	method := req.Method
	if method == http.MethodGet {
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			method = "WATCH"
		}
	}
	return method + " " + pathPattern(req.URL.Path)
}

// pathPattern replaces namespace and object names in an API path with
// placeholders, so counters group by resource instead of by object. Paths
// outside /api and /apis (discovery, /version, /openapi) are kept as is.
func pathPattern(p string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	var prefix int
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		prefix = 2 // api/v1
	case len(segs) >= 3 && segs[0] == "apis":
		prefix = 3 // apis/group/version
	default:
		return "/" + strings.Join(segs, "/")
	}
	out := append([]string(nil), segs[:prefix]...)
	rest := segs[prefix:]

	if len(rest) >= 2 && rest[0] == "namespaces" {
		// namespaces/NAME and its own subresources are the Namespace object;
		// namespaces/NAME/RESOURCE... is something inside it.
		if len(rest) == 2 || (len(rest) == 3 && (rest[2] == "status" || rest[2] == "finalize")) {
			out = append(out, "namespaces", "{name}")
			if len(rest) == 3 {
				out = append(out, rest[2])
			}
			return "/" + strings.Join(out, "/")
		}
		out = append(out, "namespaces", "{namespace}")
		rest = rest[2:]
	}
	if len(rest) >= 1 {
		out = append(out, rest[0])
	}
	if len(rest) >= 2 {
		out = append(out, "{name}")
	}
	if len(rest) >= 3 {
		// Only the subresource name: proxy paths would make keys unbounded.
		out = append(out, rest[2])
	}
	return "/" + strings.Join(out, "/")
}
