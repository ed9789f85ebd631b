package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// discoveryServer serves legacy (non-aggregated) discovery for the core
// group and whatever groups are installed, and counts root discovery calls.
type discoveryServer struct {
	mu      sync.Mutex
	groups  map[string][]metav1.APIResource // "group/version" -> resources
	rootHit int
}

func (s *discoveryServer) install(gv string, res ...metav1.APIResource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[gv] = res
}

func (s *discoveryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	switch r.URL.Path {
	case "/api":
		s.rootHit++
		_ = enc.Encode(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case "/apis":
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for gv := range s.groups {
			g, _ := schema.ParseGroupVersion(gv)
			v := metav1.GroupVersionForDiscovery{GroupVersion: gv, Version: g.Version}
			list.Groups = append(list.Groups, metav1.APIGroup{Name: g.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
		}
		_ = enc.Encode(list)
	case "/api/v1":
		_ = enc.Encode(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: metav1.Verbs{"get"}}}})
	default:
		gv := r.URL.Path[len("/apis/"):]
		res, ok := s.groups[gv]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = enc.Encode(metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: gv, APIResources: res})
	}
}

func (s *discoveryServer) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rootHit
}

func TestRESTMapper_discoversOnceAndRefreshesOnNoMatch(t *testing.T) {
	srv := &discoveryServer{groups: map[string][]metav1.APIResource{}}
	c := newTestClient(t, srv)
	if srv.hits() != 0 {
		t.Fatal("building the client ran discovery")
	}
	ctx := context.Background()

	m, err := c.RESTMapper().Mapping(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Resource.Resource != "configmaps" || m.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Errorf("mapping %+v", m)
	}
	for range 5 {
		if _, err := c.RESTMapper().RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1"); err != nil {
			t.Fatal(err)
		}
	}
	if srv.hits() != 1 {
		t.Errorf("discovery ran %d times for repeated questions, want 1", srv.hits())
	}

	// A CRD installed after discovery (earlier in the same apply).
	sandboxGVK := schema.GroupVersionKind{Group: "agents.x-k8s.io", Version: "v1beta1", Kind: "Sandbox"}
	srv.install("agents.x-k8s.io/v1beta1", metav1.APIResource{Name: "sandboxes", Kind: "Sandbox", Namespaced: true, Verbs: metav1.Verbs{"get"}})
	m, err = c.RESTMapper().Mapping(ctx, sandboxGVK)
	if err != nil {
		t.Fatalf("a kind added after discovery was not found after a refresh: %v", err)
	}
	if m.Resource != sandboxGVR {
		t.Errorf("resource %v", m.Resource)
	}
	if srv.hits() != 2 {
		t.Errorf("discovery ran %d times, want exactly one refresh (2)", srv.hits())
	}

	// A kind that does not exist: one refresh, then a no-match error.
	_, err = c.RESTMapper().Mapping(ctx, schema.GroupVersionKind{Group: "nope.example", Version: "v1", Kind: "Nope"})
	if !meta.IsNoMatchError(err) {
		t.Errorf("want a no-match error, got %v", err)
	}
	if srv.hits() != 3 {
		t.Errorf("discovery ran %d times, want 3", srv.hits())
	}
}

func TestRESTMapper_concurrentMissesShareOneRefresh(t *testing.T) {
	srv := &discoveryServer{groups: map[string][]metav1.APIResource{}}
	c := newTestClient(t, srv)
	ctx := context.Background()
	if _, err := c.RESTMapper().Mapping(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}); err != nil {
		t.Fatal(err)
	}
	srv.install("agents.x-k8s.io/v1beta1", metav1.APIResource{Name: "sandboxes", Kind: "Sandbox", Namespaced: true, Verbs: metav1.Verbs{"get"}})

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.RESTMapper().Mapping(ctx, schema.GroupVersionKind{Group: "agents.x-k8s.io", Version: "v1beta1", Kind: "Sandbox"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// All eight missed on the stale cache; how many refreshes happened
	// depends on timing, but never one per caller.
	if h := srv.hits(); h < 2 || h > 5 {
		t.Errorf("discovery ran %d times for 8 concurrent misses", h)
	}
}
