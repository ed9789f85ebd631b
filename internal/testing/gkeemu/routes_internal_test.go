package gkeemu

import (
	"net/http"
	"reflect"
	"runtime"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
)

// Every path the generated container/v1 client sends for the methods the
// emulator serves parses to its API method and the names in it; near
// misses (another verb, HTTP method or collection, a name too many) are
// UNIMPLEMENTED. Each path reaches the handler of its method.
func TestParseRoute(t *testing.T) {
	const loc = "/v1/projects/p/locations/europe-west1/"
	for _, tc := range []struct {
		http, path, method, cluster, pool, op string
		handle                                func(*Server, *request) (any, *apiError)
	}{
		{http.MethodGet, "operations", MethodOperationsList, "", "", "", (*Server).listOperations},
		{http.MethodGet, "operations/op-1", gkeapi.MethodOperationsGet, "", "", "op-1", (*Server).getOperation},
		{http.MethodGet, "clusters", MethodClustersList, "", "", "", (*Server).listClusters},
		{http.MethodGet, "clusters/c", gkeapi.MethodClustersGet, "c", "", "", (*Server).getCluster},
		{http.MethodPut, "clusters/c", gkeapi.MethodClustersUpdate, "c", "", "", (*Server).updateCluster},
		{http.MethodPost, "clusters/c:setAddons", gkeapi.MethodClustersSetAddons, "c", "", "", (*Server).setAddons},
		{http.MethodGet, "clusters/c/nodePools", gkeapi.MethodNodePoolsList, "c", "", "", (*Server).listNodePools},
		{http.MethodPost, "clusters/c/nodePools/", gkeapi.MethodNodePoolsCreate, "c", "", "", (*Server).createNodePool},
		{http.MethodGet, "clusters/c/nodePools/np", gkeapi.MethodNodePoolsGet, "c", "np", "", (*Server).getNodePool},
		{http.MethodPut, "clusters/c/nodePools/np", gkeapi.MethodNodePoolsUpdate, "c", "np", "", (*Server).updateNodePool},
		{http.MethodDelete, "clusters/c/nodePools/np", gkeapi.MethodNodePoolsDelete, "c", "np", "", (*Server).deleteNodePool},
		{http.MethodPost, "clusters/c/nodePools/np:setSize", gkeapi.MethodNodePoolsSetSize, "c", "np", "", (*Server).setNodePoolSize},
		{http.MethodPost, "clusters/c/nodePools/np:setAutoscaling", gkeapi.MethodNodePoolsSetAutoscale, "c", "np", "", (*Server).setNodePoolAutoscaling},
		{http.MethodPost, "clusters/c/nodePools/np:setManagement", gkeapi.MethodNodePoolsSetManage, "c", "np", "", (*Server).setNodePoolManagement},
	} {
		r, err := parseRoute(tc.http, loc+tc.path)
		if err != nil {
			t.Errorf("%s %s: %v", tc.http, tc.path, err)
			continue
		}
		if r.method != tc.method || r.cluster != tc.cluster || r.pool != tc.pool || r.op != tc.op ||
			r.project != "p" || r.location != "europe-west1" {
			t.Errorf("%s %s: method %q cluster %q pool %q op %q project %q location %q, want %q %q %q %q p europe-west1",
				tc.http, tc.path, r.method, r.cluster, r.pool, r.op, r.project, r.location, tc.method, tc.cluster, tc.pool, tc.op)
		}
		if got, want := runtime.FuncForPC(reflect.ValueOf(r.handle).Pointer()), runtime.FuncForPC(reflect.ValueOf(tc.handle).Pointer()); r.handle == nil || got != want {
			t.Errorf("%s %s: handled by %v, want %s", tc.http, tc.path, got.Name(), want.Name())
		}
	}
	for _, tc := range []struct{ http, path string }{
		{http.MethodPost, "clusters/c:setSize"},
		{http.MethodDelete, "clusters/c"},
		{http.MethodGet, "clusters/c/nodePools/np:setSize"},
		{http.MethodPost, "clusters/c/nodePools:setSize"},
		{http.MethodGet, "clusters/c/nodePools/np/extra"},
		{http.MethodGet, "clusters/c/other"},
		{http.MethodGet, "zones"},
		{http.MethodGet, ""},
	} {
		if _, err := parseRoute(tc.http, loc+tc.path); err == nil || err.status != "UNIMPLEMENTED" {
			t.Errorf("%s %s: %v, want UNIMPLEMENTED", tc.http, tc.path, err)
		}
	}
}
