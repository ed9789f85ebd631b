package object

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

var poolKindForServedTests = Kind{GVR: sandboxapi.SandboxWarmPoolGVR, Kind: "SandboxWarmPool", ResourceType: "agentsandbox_warm_pool"}

// discoveryServer is an API server that serves the given versions of the
// extensions group in discovery, answers every resource request with the
// mux's plain-text 404 (what a real API server says for a resource it does
// not serve), except paths in objects, and counts discovery requests.
type discoveryServer struct {
	versions  []string
	objects   map[string]string
	discovery atomic.Int64
}

func (s *discoveryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api":
		s.discovery.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
		return
	case "/apis":
		s.discovery.Add(1)
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		list.Groups = append(list.Groups, metav1.APIGroup{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{{GroupVersion: "apps/v1", Version: "v1"}}})
		if len(s.versions) > 0 {
			g := metav1.APIGroup{Name: extv1beta1.GroupVersion.Group}
			for _, v := range s.versions {
				g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: extv1beta1.GroupVersion.Group + "/" + v, Version: v})
			}
			g.PreferredVersion = g.Versions[0]
			list.Groups = append(list.Groups, g)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
		return
	}
	if body, ok := s.objects[r.URL.Path]; ok && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("404 page not found\n"))
}

func servedTestMeta(t *testing.T, s *discoveryServer) *conn.Meta {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := kube.NewClientForRESTConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return conn.ForClients("agentsandbox", c, nil)
}

func TestNotServedSaysWhatIsServedAndWhatIsRequired(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		versions    []string
		summary     string
		inDetail    []string
		readIsError bool
	}{
		{
			name: "CRDs not installed", versions: nil,
			summary:  "SandboxWarmPool API not installed",
			inDetail: []string{"serves no version of API group extensions.agents.x-k8s.io", "agentsandbox_controller", "agentsandbox_gke_addon", "requires extensions.agents.x-k8s.io/v1beta1"},
		},
		{
			name: "only v1alpha1 (older GKE add-on)", versions: []string{"v1alpha1"},
			summary:     "SandboxWarmPool API version v1beta1 not served",
			inDetail:    []string{"serves extensions.agents.x-k8s.io/v1alpha1", "requires extensions.agents.x-k8s.io/v1beta1", "GKE", "Upgrade"},
			readIsError: true,
		},
		{
			name: "group served, this CRD missing", versions: []string{"v1beta1"},
			summary:  "SandboxWarmPool not installed",
			inDetail: []string{"serves extensions.agents.x-k8s.io/v1beta1, but not the resource sandboxwarmpools", "extensions"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &discoveryServer{versions: tc.versions}
			meta := servedTestMeta(t, s)
			obj := poolKindForServedTests.New()
			obj.SetName("pool")
			obj.SetNamespace("agents")

			_, diags := poolKindForServedTests.Create(ctx, meta, obj)
			if !diags.HasError() {
				t.Fatal("create must fail")
			}
			d := diags.Errors()[0]
			if d.Summary() != tc.summary {
				t.Errorf("summary = %q, want %q", d.Summary(), tc.summary)
			}
			for _, want := range tc.inDetail {
				if !strings.Contains(d.Detail(), want) {
					t.Errorf("detail lacks %q:\n%s", want, d.Detail())
				}
			}
			if n := s.discovery.Load(); n == 0 {
				t.Error("the diagnosis did not ask discovery")
			}

			_, found, diags := poolKindForServedTests.Read(ctx, meta, "agents", "pool")
			if found {
				t.Fatal("found an object on a server that serves none")
			}
			if diags.HasError() != tc.readIsError {
				t.Fatalf("read error = %v, want %v: %v", diags.HasError(), tc.readIsError, diags)
			}

			// Delete judges as Read does: a removed CRD took its objects
			// with it, but where only another version is served the object
			// may still exist, and a destroy must not pass silently.
			diags = poolKindForServedTests.Delete(ctx, meta, "agents", "pool", kube.DeleteOptions{})
			if diags.HasError() != tc.readIsError {
				t.Fatalf("delete error = %v, want %v: %v", diags.HasError(), tc.readIsError, diags)
			}
			if tc.readIsError {
				d := diags.Errors()[0]
				if d.Summary() != tc.summary || !strings.Contains(d.Detail(), "Request: delete") {
					t.Errorf("delete diagnostic = %s: %s", d.Summary(), d.Detail())
				}
			}
		})
	}
}

// The check costs nothing on the normal path: a GET that works sends no
// discovery request.
func TestServedCheckOnlyOnTheErrorPath(t *testing.T) {
	s := &discoveryServer{versions: []string{"v1beta1"}, objects: map[string]string{
		"/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/agents/sandboxwarmpools/pool": `{"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxWarmPool","metadata":{"name":"pool","namespace":"agents"}}`,
	}}
	meta := servedTestMeta(t, s)
	_, found, diags := poolKindForServedTests.Read(context.Background(), meta, "agents", "pool")
	if diags.HasError() || !found {
		t.Fatalf("found=%v diags=%v", found, diags)
	}
	if n := s.discovery.Load(); n != 0 {
		t.Errorf("a successful read sent %d discovery requests", n)
	}
	// A missing object (a JSON 404 naming it) is not a missing kind either.
	_, found, diags = poolKindForServedTests.Read(context.Background(), fakeMeta(), "agents", "gone")
	if diags.HasError() || found {
		t.Fatalf("found=%v diags=%v", found, diags)
	}
}

func TestNotServedForOtherGroupsGivesAGenericHint(t *testing.T) {
	k := Kind{GVR: testKind.GVR, Kind: "Widget"}
	n := notServed{kind: k, group: servedGroup{Versions: []string{"v1alpha1"}}}
	d := n.diagnostics("get", k.Ref("ns", "w"), context.DeadlineExceeded)[0]
	if strings.Contains(d.Detail(), "agentsandbox_controller") || !strings.Contains(d.Detail(), "example.com/v1alpha1") {
		t.Errorf("detail = %s", d.Detail())
	}
}
