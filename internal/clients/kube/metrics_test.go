package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestPathPattern(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/namespaces":                                                  "/api/v1/namespaces",
		"/api/v1/namespaces/team-a":                                           "/api/v1/namespaces/{name}",
		"/api/v1/namespaces/team-a/status":                                    "/api/v1/namespaces/{name}/status",
		"/api/v1/namespaces/team-a/configmaps":                                "/api/v1/namespaces/{namespace}/configmaps",
		"/api/v1/namespaces/team-a/configmaps/cfg":                            "/api/v1/namespaces/{namespace}/configmaps/{name}",
		"/api/v1/namespaces/team-a/pods/p/proxy/some/path":                    "/api/v1/namespaces/{namespace}/pods/{name}/proxy",
		"/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes/s1":            "/apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes/{name}",
		"/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes/s1/status":     "/apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes/{name}/status",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sandboxes.x": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
		"/apis/agents.x-k8s.io/v1beta1/sandboxes":                             "/apis/agents.x-k8s.io/v1beta1/sandboxes",
		"/apis":                         "/apis",
		"/apis/agents.x-k8s.io/v1beta1": "/apis/agents.x-k8s.io/v1beta1",
		"/api":                          "/api",
		"/version":                      "/version",
	} {
		if got := pathPattern(in); got != want {
			t.Errorf("pathPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRequestCounters goes through the real client: every logical request
// is counted once under its method and pattern, retries separately.
// Not parallel: the counters are process-wide.
func TestRequestCounters(t *testing.T) {
	fastRetries(t)
	srv := &scripted{codes: []int{503, 200}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := NewClient(context.Background(), Config{Host: ts.URL, Token: "t", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ResetRequestCounts()
	gvr := schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}
	for _, name := range []string{"a", "b", "c"} {
		_, _ = c.Get(context.Background(), gvr, "ns", name)
	}
	_, _ = c.List(context.Background(), gvr, "ns", "")

	got := RequestCounts()
	want := map[string]int64{
		"GET /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes/{name}": 3,
		"GET /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes":        1,
	}
	if len(got) != len(want) {
		t.Errorf("RequestCounts() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("RequestCounts()[%q] = %d, want %d", k, got[k], v)
		}
	}
	if RequestCount() != 4 || RetryCount() != 1 {
		t.Errorf("RequestCount() = %d, RetryCount() = %d; want 4 and 1 (the first 503)", RequestCount(), RetryCount())
	}

	req := httptest.NewRequest(http.MethodGet, "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes?watch=true", nil)
	if k := requestKey(req); k != "WATCH /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes" {
		t.Errorf("watch key %q", k)
	}

	ResetRequestCounts()
	if RequestCount() != 0 || RetryCount() != 0 || len(RequestCounts()) != 0 {
		t.Errorf("counters not reset: %d %d %v", RequestCount(), RetryCount(), RequestCounts())
	}
}
