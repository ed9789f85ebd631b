package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The provider's side of a refresh of an unchanged object (ReadResource),
// per object, against a stand-in API server that answers the object's GET
// from memory (so the numbers are the provider's CPU, not the network's):
//
//   - framework: the plugin framework's server alone (decode the state,
//     GET, flatten, semantic equality, encode);
//   - marking: the server Terraform gets, on a state without a read marker
//     (the framework's path, plus the check that the answer is the state
//     and the marker written into the private state);
//   - fast: the same server on the marked state: one GET, no conversion.
//
//	go test ./bench -run '^$' -bench ReadNoChange

// readObjects are the live objects the stand-in API server returns.
var readObjects = map[string]struct {
	path string
	obj  map[string]any
}{
	"agentsandbox_sandbox_template": {
		path: "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/bench/sandboxtemplates/set-1",
		obj: map[string]any{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxTemplate",
			"metadata": liveMeta(),
			"spec": map[string]any{
				"networkPolicyManagement": "Unmanaged",
				"podTemplate": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/component": "execution-sandbox", "bench/set": "set-1"}},
					"spec": map[string]any{
						"runtimeClassName":             "gvisor",
						"automountServiceAccountToken": false,
						"securityContext":              map[string]any{"runAsNonRoot": true, "runAsUser": 10001, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
						"containers": []any{map[string]any{
							"name": "python-runtime", "image": "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0",
							"ports": []any{map[string]any{"containerPort": 8888, "protocol": "TCP"}},
							"env":   []any{map[string]any{"name": "SET", "value": "set-1"}},
							"resources": map[string]any{
								"requests": map[string]any{"cpu": "500m", "memory": "1Gi"},
								"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
							},
							"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
						}},
					},
				},
			},
		},
	},
	"agentsandbox_warm_pool": {
		path: "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/bench/sandboxwarmpools/set-1",
		obj: map[string]any{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool",
			"metadata": liveMeta(),
			"spec":     map[string]any{"replicas": 0, "sandboxTemplateRef": map[string]any{"name": "set-1"}},
			"status":   map[string]any{"selector": "agents.x-k8s.io/pool=set-1"},
		},
	},
	"agentsandbox_network_policy": {
		path: "/apis/networking.k8s.io/v1/namespaces/bench/networkpolicies/set-1",
		obj: map[string]any{
			"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
			"metadata": liveMeta(),
			"spec": map[string]any{
				"podSelector": map[string]any{"matchLabels": map[string]any{"bench/set": "set-1"}},
				"policyTypes": []any{"Ingress", "Egress"},
			},
		},
	},
}

func liveMeta() map[string]any {
	return map[string]any{
		"name": "set-1", "namespace": "bench", "uid": "0b7f9a52-7c1e-4d7b-9d1c-1c2f3e4d5a6b", "resourceVersion": "4711",
		"generation": 1, "labels": map[string]any{"app.kubernetes.io/part-of": "bench", "bench/gen": "1"},
	}
}

// fakeObjectServer answers the GET of each object of readObjects.
func fakeObjectServer(b *testing.B) *httptest.Server {
	b.Helper()
	bodies := map[string][]byte{}
	for _, o := range readObjects {
		body, err := json.Marshal(o.obj)
		if err != nil {
			b.Fatal(err)
		}
		bodies[o.path] = body
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if body, ok := bodies[r.URL.Path]; ok && r.Method == http.MethodGet {
			_, _ = w.Write(body)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkReadNoChange(b *testing.B) {
	s := protocoltest.New(b, provider.New("bench"))
	api := fakeObjectServer(b)
	ctx := context.Background()
	cfg := protocoltest.Dynamic(b, s.ProviderType(b), map[string]any{
		"kubernetes": map[string]any{"host": api.URL, "token": "bench", "insecure": true},
	})
	configure := func(srv tfprotov6.ProviderServer) {
		conf, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: cfg})
		if err != nil || hasError(conf.Diagnostics) {
			b.Fatalf("configure: %v %v", err, describe(conf.Diagnostics))
		}
	}
	framework := providerserver.NewProtocol6(provider.New("bench")())()
	configure(framework)
	b.Setenv(provider.FastPathVar, "on") // the fast path is what is measured
	srv := provider.NewProtocol6("bench")()
	configure(srv)
	for _, typeName := range []string{"agentsandbox_sandbox_template", "agentsandbox_warm_pool", "agentsandbox_network_policy"} {
		read := func(srv tfprotov6.ProviderServer, state *tfprotov6.DynamicValue, private []byte) *tfprotov6.ReadResourceResponse {
			resp, err := srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: state, Private: private})
			if err != nil || hasError(resp.Diagnostics) || resp.NewState == nil {
				b.Fatalf("read: %v %v", err, describe(resp.Diagnostics))
			}
			return resp
		}
		typ := s.ResourceType(b, typeName)
		first, err := tfprotov6.NewDynamicValue(typ, stateFor(b, s, typeName, benchObjects[typeName]))
		if err != nil {
			b.Fatal(err)
		}
		// Refresh until the state is what a refresh of the object gives
		// (the first refresh brings the planned state in line with the
		// object) and the wrapper marks it.
		state, private := &first, []byte(nil)
		for i := 0; private == nil; i++ {
			if i == 5 {
				b.Fatalf("%s: no read marker after %d refreshes", typeName, i)
			}
			resp := read(srv, state, nil)
			if len(resp.Private) > 0 {
				private = resp.Private
			} else {
				state = resp.NewState
			}
		}
		for _, c := range []struct {
			name    string
			srv     tfprotov6.ProviderServer
			private []byte
			fast    bool
		}{
			{"framework", framework, nil, false},
			{"marking", srv, nil, false},
			{"fast", srv, private, true},
		} {
			b.Run(typeName+"/"+c.name, func(b *testing.B) {
				fast0, _ := fastpath.ReadCounts()
				b.ReportAllocs()
				cpu0 := processCPU(b)
				b.ResetTimer()
				for b.Loop() {
					read(c.srv, state, c.private)
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
				if fast1, _ := fastpath.ReadCounts(); (fast1-fast0 == int64(b.N)) != c.fast {
					b.Fatalf("answered by the fast path: %d of %d reads, want all: %v", fast1-fast0, b.N, c.fast)
				}
			})
		}
	}
}
