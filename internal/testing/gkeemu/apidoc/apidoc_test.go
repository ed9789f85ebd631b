package apidoc_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
)

func load(t *testing.T) *apidoc.Document {
	t.Helper()
	d, err := apidoc.Load()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The document is the one the required google.golang.org/api ships.
func TestLoadsTheRequiredRevision(t *testing.T) {
	d := load(t)
	if d.Revision == "" || !strings.HasSuffix(d.Path, "container-api.json") {
		t.Fatalf("revision %q from %s", d.Revision, d.Path)
	}
	if _, ok := d.Schema("NodePool"); !ok {
		t.Fatal("no NodePool schema")
	}
	t.Logf("container/v1 discovery document revision %s, %d methods, from %s", d.Revision, len(d.Methods()), d.Path)
}

// Every method the provider calls is found by verb and path, including
// methods that share the template v1/{+name} and differ by the name's
// pattern.
func TestMatchMethods(t *testing.T) {
	d := load(t)
	const c = "/v1/projects/p/locations/us-central1/clusters/c"
	for _, tc := range []struct{ verb, path, want string }{
		{"GET", c, "projects.locations.clusters.get"},
		{"GET", "/v1/projects/p/locations/-/clusters", "projects.locations.clusters.list"},
		{"PUT", c, "projects.locations.clusters.update"},
		{"POST", c + ":setAddons", "projects.locations.clusters.setAddons"},
		{"POST", c + "/nodePools", "projects.locations.clusters.nodePools.create"},
		{"GET", c + "/nodePools", "projects.locations.clusters.nodePools.list"},
		{"GET", c + "/nodePools/np", "projects.locations.clusters.nodePools.get"},
		{"PUT", c + "/nodePools/np", "projects.locations.clusters.nodePools.update"},
		{"DELETE", c + "/nodePools/np", "projects.locations.clusters.nodePools.delete"},
		{"POST", c + "/nodePools/np:setSize", "projects.locations.clusters.nodePools.setSize"},
		{"POST", c + "/nodePools/np:setAutoscaling", "projects.locations.clusters.nodePools.setAutoscaling"},
		{"POST", c + "/nodePools/np:setManagement", "projects.locations.clusters.nodePools.setManagement"},
		{"GET", "/v1/projects/p/locations/us-central1/operations/op-1", "projects.locations.operations.get"},
		{"GET", "/v1/projects/p/locations/us-central1/operations", "projects.locations.operations.list"},
	} {
		m, _ := d.Match(tc.verb, tc.path)
		if m == nil || m.ID != tc.want {
			t.Errorf("%s %s: matched %v, want %s", tc.verb, tc.path, m, tc.want)
		}
	}
	for _, tc := range []struct{ verb, path string }{
		{"PATCH", c},                           // no such verb
		{"POST", c + "/nodePools/np:setSizes"}, // custom verb misspelt
		{"GET", "/v1/projects/p/locations/us-central1/clusters/c/nodepools/np"}, // case matters
		{"GET", "/v1/projects/p/clusters/c"},                                    // not a name the patterns accept
	} {
		if m, _ := d.Match(tc.verb, tc.path); m != nil {
			t.Errorf("%s %s matched %s", tc.verb, tc.path, m.ID)
		}
	}
}

func TestCheckRequest(t *testing.T) {
	d := load(t)
	const create = "/v1/projects/p/locations/us-central1/clusters/c/nodePools"
	std := url.Values{"alt": {"json"}, "prettyPrint": {"false"}}
	for _, tc := range []struct {
		name, verb, path string
		query            url.Values
		body             string
		field, problem   string // "" = no violation
		unknown          bool
	}{
		{"valid create", "POST", create, std,
			`{"nodePool":{"name":"np","initialNodeCount":1,"config":{"sandboxConfig":{"type":"MICROVM"},"labels":{"a":"b"},"diskSizeGb":100}}}`, "", "", false},
		{"field name typo", "POST", create, std, `{"nodePool":{"name":"np","config":{"sandboxConfg":{"type":"GVISOR"}}}}`,
			"nodePool.config.sandboxConfg", `unknown field "sandboxConfg": NodeConfig has no such field`, true},
		{"top-level typo", "POST", create, std, `{"nodePol":{}}`, "nodePol", "CreateNodePoolRequest has no such field", true},
		{"int64 as a string", "PUT", create + "/np", std, `{"diskSizeGb":"100"}`, "", "", false},
		{"int64 as a number, which Google's parser reads too", "PUT", create + "/np", std, `{"diskSizeGb":100}`, "", "", false},
		{"int64 not a number", "PUT", create + "/np", std, `{"diskSizeGb":"big"}`, "diskSizeGb", `"big" is not an int64`, false},
		{"int32 as a number", "POST", create, std, `{"nodePool":{"initialNodeCount":1.5}}`, "nodePool.initialNodeCount", "want an integer, got 1.5", false},
		{"int32 as a string", "POST", create, std, `{"nodePool":{"config":{"diskSizeGb":"100"}}}`,
			"nodePool.config.diskSizeGb", "want an integer", false},
		{"enum value", "POST", create, std, `{"nodePool":{"config":{"sandboxConfig":{"type":"KATA"}}}}`,
			"nodePool.config.sandboxConfig.type", `value "KATA" is not one of the enum's values (UNSPECIFIED, GVISOR, MICROVM)`, false},
		{"object for a boolean", "POST", create, std, `{"nodePool":{"config":{"spot":{}}}}`, "nodePool.config.spot", "want a boolean", false},
		{"map value", "POST", create, std, `{"nodePool":{"config":{"labels":{"a":1}}}}`, `nodePool.config.labels["a"]`, "want a string", false},
		{"array element", "POST", create, std, `{"nodePool":{"config":{"taints":[{"key":"k","effct":"NO_SCHEDULE"}]}}}`,
			"nodePool.config.taints[0].effct", "NodeTaint has no such field", true},
		{"unknown query parameter", "POST", create, url.Values{"alt": {"json"}, "validateOnly": {"true"}}, `{"nodePool":{}}`,
			"?validateOnly", "unknown query parameter", true},
		{"a deprecated query parameter the method has", "GET", "/v1/projects/p/locations/l/clusters/c", url.Values{"zone": {"z"}}, "", "", "", false},
		{"body on a GET", "GET", "/v1/projects/p/locations/l/clusters/c", nil, `{"x":1}`, "", "takes no request body", false},
		{"unknown path", "POST", create + "/np:resize", std, `{}`, "POST " + create + "/np:resize", "no method", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, vs := d.CheckRequest(tc.verb, tc.path, tc.query, []byte(tc.body))
			if tc.problem == "" {
				if len(vs) > 0 {
					t.Fatalf("violations: %v", vs)
				}
				return
			}
			if len(vs) != 1 {
				t.Fatalf("want one violation at %s, got %v", tc.field, vs)
			}
			v := vs[0]
			if v.Field != tc.field || !strings.Contains(v.Problem, tc.problem) || v.Unknown != tc.unknown || v.Where != "request" {
				t.Errorf("got %+v\nwant field %q, problem containing %q, unknown %v", v, tc.field, tc.problem, tc.unknown)
			}
		})
	}
}

func TestCheckResponse(t *testing.T) {
	d := load(t)
	op, _ := d.Match("GET", "/v1/projects/p/locations/l/operations/o")
	good := `{"name":"o","operationType":"CREATE_NODE_POOL","status":"DONE","startTime":"2026-01-02T03:04:05.123Z",` +
		`"error":{"code":9,"message":"m"},"targetLink":"https://x/y"}`
	if vs := d.CheckResponse(op, []byte(good)); len(vs) != 0 {
		t.Fatalf("a valid operation: %v", vs)
	}
	for body, want := range map[string]string{
		`{"name":"o","statusMesage":"m"}`:       `statusMesage: unknown field "statusMesage": Operation has no such field`,
		`{"name":"o","status":"FINISHED"}`:      `status: value "FINISHED" is not one of`,
		`{"name":"o","error":{"code":"9"}}`:     "error.code: want an integer",
		`{"name":"o","operationType":"RESIZE"}`: "operationType: value \"RESIZE\"",
		// GKE's answers carry int64 as strings.
		`{"name":"o","progress":{"metrics":[{"intValue":"3"}]}}`: "",
		`{"name":"o","progress":{"metrics":[{"intValue":3}]}}`:   "progress.metrics[0].intValue: want a string (int64 values travel as JSON strings), got the number 3",
	} {
		vs := d.CheckResponse(op, []byte(body))
		if want == "" {
			if len(vs) > 0 {
				t.Errorf("%s: %v", body, vs)
			}
			continue
		}
		if len(vs) != 1 || !strings.Contains(vs[0].Field+": "+vs[0].Problem, want) || vs[0].Where != "response" {
			t.Errorf("%s: got %v, want %q", body, vs, want)
		}
	}
}

func TestCheckError(t *testing.T) {
	if vs := apidoc.CheckError("m", []byte(`{"error":{"code":400,"message":"x","status":"INVALID_ARGUMENT","errors":[],"details":[]}}`)); len(vs) != 0 {
		t.Fatal(vs)
	}
	vs := apidoc.CheckError("m", []byte(`{"error":{"code":400,"mesage":"x"}}`))
	if len(vs) != 1 || vs[0].Field != "error.mesage" || !vs[0].Unknown {
		t.Fatalf("got %v", vs)
	}
}
