package gkeemu

import (
	"net/http"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
)

// Every path the generated container/v1 client sends for the methods the
// emulator serves parses to its API method and the names in it; near
// misses (another verb, HTTP method or collection, a name too many) are
// UNIMPLEMENTED.
func TestParseRoute(t *testing.T) {
	const loc = "/v1/projects/p/locations/europe-west1/"
	for _, tc := range []struct {
		http, path, method, cluster, pool, op string
	}{
		{http.MethodGet, "operations", MethodOperationsList, "", "", ""},
		{http.MethodGet, "operations/op-1", gkeapi.MethodOperationsGet, "", "", "op-1"},
		{http.MethodGet, "clusters", MethodClustersList, "", "", ""},
		{http.MethodGet, "clusters/c", gkeapi.MethodClustersGet, "c", "", ""},
		{http.MethodPut, "clusters/c", gkeapi.MethodClustersUpdate, "c", "", ""},
		{http.MethodPost, "clusters/c:setAddons", gkeapi.MethodClustersSetAddons, "c", "", ""},
		{http.MethodGet, "clusters/c/nodePools", gkeapi.MethodNodePoolsList, "c", "", ""},
		{http.MethodPost, "clusters/c/nodePools/", gkeapi.MethodNodePoolsCreate, "c", "", ""},
		{http.MethodGet, "clusters/c/nodePools/np", gkeapi.MethodNodePoolsGet, "c", "np", ""},
		{http.MethodPut, "clusters/c/nodePools/np", gkeapi.MethodNodePoolsUpdate, "c", "np", ""},
		{http.MethodDelete, "clusters/c/nodePools/np", gkeapi.MethodNodePoolsDelete, "c", "np", ""},
		{http.MethodPost, "clusters/c/nodePools/np:setSize", gkeapi.MethodNodePoolsSetSize, "c", "np", ""},
		{http.MethodPost, "clusters/c/nodePools/np:setAutoscaling", gkeapi.MethodNodePoolsSetAutoscale, "c", "np", ""},
		{http.MethodPost, "clusters/c/nodePools/np:setManagement", gkeapi.MethodNodePoolsSetManage, "c", "np", ""},
	} {
		r, err := parseRoute(tc.http, loc+tc.path)
		if err != nil {
			t.Errorf("%s %s: %v", tc.http, tc.path, err)
			continue
		}
		if r.method != tc.method || r.cluster != tc.cluster || r.pool != tc.pool || r.op != tc.op ||
			r.project != "p" || r.location != "europe-west1" || r.handle == nil {
			t.Errorf("%s %s: method %q cluster %q pool %q op %q project %q location %q, want %q %q %q %q p europe-west1 and a handler",
				tc.http, tc.path, r.method, r.cluster, r.pool, r.op, r.project, r.location, tc.method, tc.cluster, tc.pool, tc.op)
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
