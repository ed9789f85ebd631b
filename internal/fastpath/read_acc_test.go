package fastpath_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/nestedattr"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// The read fast path answers the refresh of an unchanged object from the
// read marker the wrapper left in the private state, with one GET and no
// framework. These tests read every eligible resource type twice, through
// the framework's server alone and through the server Terraform gets
// (provider.NewProtocol6WithError), against the local control plane, and
// require the same answer field by field (the private state compared
// without the read marker, which only the wrapper writes): unchanged
// objects, which the fast path must answer (so the comparison is not
// vacuous), and every way the marker must not be trusted, which must go to
// the framework. Each read through the wrapper must cost exactly one GET.

// readServers is one pair of servers configured alike.
type readServers struct {
	framework tfprotov6.ProviderServer
	fast      *fastpath.Server
}

func newReadServers(t *testing.T, s *pt.Server, fieldManager string) readServers {
	t.Helper()
	cfg := map[string]any{"kubernetes": map[string]any{"config_path": acctest.Kubeconfig()}}
	if fieldManager != "" {
		cfg["field_manager"] = fieldManager
	}
	framework := providerserver.NewProtocol6(provider.New("test")())()
	// The fast path's own tests compare it with the framework whatever
	// the suite runs with (AGENTSANDBOX_FASTPATH=off takes it out of
	// every other test's provider).
	t.Setenv(provider.FastPathVar, "on")
	srv, err := provider.NewProtocol6WithError("test")()
	if err != nil {
		t.Fatal(err)
	}
	// The provider's server is the fast path behind package nestedattr's
	// layer.
	outer, ok := srv.(*nestedattr.Server)
	if !ok {
		t.Fatalf("the provider's server is a %T, not nestedattr's", srv)
	}
	fast, ok := outer.Inner.(*fastpath.Server)
	if !ok {
		t.Fatalf("behind nestedattr is a %T, not the fast path", outer.Inner)
	}
	for _, p := range []tfprotov6.ProviderServer{framework, fast} {
		resp, err := p.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
			Config: pt.Dynamic(t, s.ProviderType(t), cfg),
		})
		if err != nil {
			t.Fatal(err)
		}
		if errs := pt.Errors(resp.Diagnostics); len(errs) > 0 {
			t.Fatal(pt.Describe(errs))
		}
	}
	return readServers{framework: framework, fast: fast}
}

// readType is one eligible resource type: its configuration, its object,
// and an out-of-band change of its spec and (if it has one) its status.
type readType struct {
	typeName   string
	gvr        schema.GroupVersionResource
	cfg        func(ns, name string) map[string]any
	specPatch  string
	statusPath string // a merge patch of the status subresource; "" for none
}

func readTypes() []readType {
	return []readType{
		{
			typeName: "agentsandbox_sandbox_template", gvr: sandboxtemplate.Kind.GVR,
			cfg: func(ns, name string) map[string]any {
				return map[string]any{
					"name": name, "namespace": ns, "network_policy_management": "Unmanaged",
					"labels": map[string]any{"app.kubernetes.io/part-of": "bench"},
					"pod_template": map[string]any{
						"labels":           map[string]any{"app.kubernetes.io/component": "execution-sandbox"},
						"security_context": map[string]any{"run_as_user": 10001},
						"containers": []any{pt.Container(map[string]any{
							"ports": []any{map[string]any{"container_port": 8888}},
							"env":   []any{map[string]any{"name": "SET", "value": name}},
						})},
					},
				}
			},
			specPatch: `{"spec":{"podTemplate":{"spec":{"containers":[{"name":"python-runtime","image":"busybox:1.36"}]}}}}`,
		},
		{
			typeName: "agentsandbox_warm_pool", gvr: warmpool.Kind.GVR,
			cfg: func(ns, name string) map[string]any {
				return map[string]any{
					"name": name, "namespace": ns, "template": "pool-template", "replicas": 0, "wait_for_ready": false,
					"labels": map[string]any{"app.kubernetes.io/part-of": "bench"},
				}
			},
			specPatch:  `{"spec":{"replicas":2}}`,
			statusPath: `{"status":{"selector":"changed=out-of-band"}}`,
		},
		{
			typeName: "agentsandbox_network_policy", gvr: networkpolicy.Kind.GVR,
			cfg: func(ns, name string) map[string]any {
				return map[string]any{
					"name": name, "namespace": ns, "ingress": []any{},
					"labels":       map[string]any{"app.kubernetes.io/part-of": "bench"},
					"pod_selector": map[string]any{"match_labels": map[string]any{"bench/set": name}},
				}
			},
			specPatch: `{"spec":{"podSelector":{"matchLabels":{"bench/set":"other"}}}}`,
		},
		{
			typeName: "agentsandbox_sandbox", gvr: sandbox.Kind.GVR,
			cfg: func(ns, name string) map[string]any {
				return map[string]any{
					"name": name, "namespace": ns, "service": true,
					"pod_template": map[string]any{"containers": []any{pt.Container(nil)}},
				}
			},
			specPatch:  `{"spec":{"podTemplate":{"metadata":{"labels":{"out-of-band":"yes"}}}}}`,
			statusPath: `{"status":{"serviceFQDN":"changed.example.invalid"}}`,
		},
	}
}

// accSetup skips t without TF_ACC, and returns a namespace with the warm
// pools' template in it (a pool is checked against it on apply), the
// protocol test server and the main pair of servers.
func accSetup(t *testing.T) (string, *pt.Server, readServers) {
	t.Helper()
	acctest.SkipUnlessAcc(t)
	if acctest.Kubeconfig() == "" {
		t.Fatal("TF_ACC is set but there is no test cluster (run through make test or the testenv command)")
	}
	ns := acctest.Namespace(t)
	s := pt.New(t, provider.New("test"))
	main := newReadServers(t, s, "")
	acctest.CreateTemplate(t, ns, "pool-template", map[string]any{
		"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox:1.36"}}}},
	})
	return ns, s, main
}

func TestAccReadFastPath_sameAnswerAsTheFramework(t *testing.T) {
	ns, s, main := accSetup(t)
	other := newReadServers(t, s, "another-field-manager")
	ctx := context.Background()
	for _, rt := range readTypes() {
		t.Run(rt.typeName, func(t *testing.T) {
			if !main.fast.ReadEligible(ctx, rt.typeName) {
				t.Fatalf("%s: reads not eligible for the fast path", rt.typeName)
			}
			r := &readRun{t: t, s: s, rt: rt, srv: main, typ: s.ResourceType(t, rt.typeName), ref: acctest.ObjectRef{GVR: rt.gvr, Namespace: ns, Name: "read-" + rt.gvr.Resource}}
			r.create()

			// The first read of a state written by a create has no
			// marker: the framework reads, and the wrapper marks it.
			state, private := r.baseline()

			t.Run("unchanged", func(t *testing.T) {
				got := r.compare(t, main, state, private, true)
				if !bytes.Equal(got.NewState.MsgPack, state.MsgPack) || !bytes.Equal(got.Private, private) {
					t.Error("the fast answer is not the request's state and private state, byte for byte")
				}
			})
			t.Run("another binary", func(t *testing.T) {
				got := r.compare(t, main, state, markerWith(t, private, "binary", "go-build-id/of/another/binary"), false)
				// Read again by this binary, unchanged: marked anew.
				if !bytes.Equal(got.Private, private) {
					t.Errorf("the marker written by this binary: %s, want %s", got.Private, private)
				}
			})
			t.Run("another field manager", func(t *testing.T) {
				r.compare(t, other, state, private, false)
			})
			t.Run("another key in the private state", func(t *testing.T) {
				r.compare(t, main, state, withKey(t, private, "agentsandbox_import_read", `true`), false)
			})
			t.Run("import marker", func(t *testing.T) {
				imp := withKey(t, private, "agentsandbox_imported", fmt.Sprintf(`{"namespace":%q,"name":%q}`, ns, r.ref.Name))
				r.compare(t, main, state, imp, false)
			})
			t.Run("corrupted marker", func(t *testing.T) {
				r.compare(t, main, state, withKey(t, nil, fastpath.ReadMarkerKey, `{"type":"agentsandbox_sandbox"}`), false)
			})
			t.Run("marker of another type", func(t *testing.T) {
				r.compare(t, main, state, markerWith(t, private, "type", "agentsandbox_sandbox_claim"), false)
			})
			t.Run("marker of another object", func(t *testing.T) {
				r.compare(t, main, state, markerWith(t, private, "uid", "00000000-0000-0000-0000-000000000000"), false)
			})
			t.Run("marker of another resourceVersion", func(t *testing.T) {
				r.compare(t, main, state, markerWith(t, private, "rv", "1"), false)
			})
			t.Run("state not the marker's", func(t *testing.T) {
				r.compare(t, main, r.withLabel(state, "edited", "in-state"), private, false)
			})

			// Changes out of band: after each, the marker of the state
			// before must not answer, and the framework reads from the
			// wrapper's one GET.
			t.Run("label changed out of band", func(t *testing.T) {
				acctest.Patch(t, r.ref, types.MergePatchType, `{"metadata":{"labels":{"out-of-band":"label"}}}`)
				r.compare(t, main, state, private, false)
			})
			state, private = r.baseline()
			t.Run("spec changed out of band", func(t *testing.T) {
				acctest.Patch(t, r.ref, types.MergePatchType, rt.specPatch)
				r.compare(t, main, state, private, false)
			})
			state, private = r.baseline()
			if rt.statusPath != "" {
				t.Run("status changed out of band", func(t *testing.T) {
					before := acctest.Get(t, r.ref).GetResourceVersion()
					_, err := acctest.Dynamic(t).Resource(rt.gvr).Namespace(ns).Patch(t.Context(), r.ref.Name, types.MergePatchType,
						[]byte(rt.statusPath), metav1.PatchOptions{}, "status")
					if err != nil {
						t.Fatal(err)
					}
					if acctest.Get(t, r.ref).GetResourceVersion() == before {
						t.Fatal("control: the status patch changed nothing")
					}
					r.compare(t, main, state, private, false)
				})
				state, private = r.baseline()
			}
			t.Run("recreated under the same name", func(t *testing.T) {
				acctest.Delete(t, r.ref)
				r.create()
				r.compare(t, main, state, private, false)
			})
			state, private = r.baseline()
			t.Run("deleted out of band", func(t *testing.T) {
				acctest.Delete(t, r.ref)
				got := r.compare(t, main, state, private, false)
				if v, err := got.NewState.Unmarshal(r.typ); err != nil || !v.IsNull() {
					t.Errorf("the resource was not removed from the state: %v", err)
				}
			})
		})
	}
}

type readRun struct {
	t   *testing.T
	s   *pt.Server
	rt  readType
	srv readServers
	typ tftypes.Type
	ref acctest.ObjectRef
}

// create plans and applies the object through the framework, as
// Terraform does.
func (r *readRun) create() {
	t := r.t
	t.Helper()
	cfg := pt.Dynamic(t, r.typ, r.rt.cfg(r.ref.Namespace, r.ref.Name))
	null, err := tfprotov6.NewDynamicValue(r.typ, tftypes.NewValue(r.typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := r.srv.framework.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: r.rt.typeName, PriorState: &null, ProposedNewState: cfg, Config: cfg,
	})
	if err != nil || len(pt.Errors(plan.Diagnostics)) > 0 {
		t.Fatalf("plan: %v %s", err, pt.Describe(plan.Diagnostics))
	}
	applied, err := r.srv.framework.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: r.rt.typeName, PriorState: &null, PlannedState: plan.PlannedState, Config: cfg,
		PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil || len(pt.Errors(applied.Diagnostics)) > 0 {
		t.Fatalf("apply: %v %s", err, pt.Describe(applied.Diagnostics))
	}
}

// baseline reads the object through the wrapper, from its own state
// without a private state, until the wrapper writes a marker (the read is
// a fixed point: the controller may still be updating the object), and
// returns the state and the marked private state.
func (r *readRun) baseline() (*tfprotov6.DynamicValue, []byte) {
	t := r.t
	t.Helper()
	state := r.freshState()
	for i := 0; i < 20; i++ {
		resp := r.read(r.srv.fast, state, nil)
		if errs := pt.Errors(resp.Diagnostics); len(errs) > 0 {
			t.Fatal(pt.Describe(errs))
		}
		if hasMarker(t, resp.Private) {
			// The controller may still be at work: the marker is a
			// baseline once the object stays as the marker saw it.
			time.Sleep(time.Second)
			if rv, _ := markerField(t, resp.Private, "rv").(string); r.resourceVersion(t) == rv {
				return state, resp.Private
			}
			continue
		}
		// Terraform stores the new state and sends it again.
		state = resp.NewState
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatal("the wrapper never marked a read of the unchanged object")
	return nil, nil
}

// freshState is the framework's read of the object as it is now, from a
// state that holds only the configuration (as after an apply).
func (r *readRun) freshState() *tfprotov6.DynamicValue {
	t := r.t
	t.Helper()
	cfg := pt.Dynamic(t, r.typ, r.rt.cfg(r.ref.Namespace, r.ref.Name))
	plan, err := r.srv.framework.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: r.rt.typeName, PriorState: mustNull(t, r.typ), ProposedNewState: cfg, Config: cfg,
	})
	if err != nil || len(pt.Errors(plan.Diagnostics)) > 0 {
		t.Fatalf("plan: %v %s", err, pt.Describe(plan.Diagnostics))
	}
	// Unknown computed values are not a state: fill them from a read.
	v, err := plan.PlannedState.Unmarshal(r.typ)
	if err != nil {
		t.Fatal(err)
	}
	known, err := tftypes.Transform(v, func(_ *tftypes.AttributePath, x tftypes.Value) (tftypes.Value, error) {
		if x.IsKnown() {
			return x, nil
		}
		return tftypes.NewValue(x.Type(), nil), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := tfprotov6.NewDynamicValue(r.typ, known)
	if err != nil {
		t.Fatal(err)
	}
	resp := r.read(r.srv.framework, &d, nil)
	if errs := pt.Errors(resp.Diagnostics); len(errs) > 0 || resp.NewState == nil {
		t.Fatalf("read: %s", pt.Describe(errs))
	}
	return resp.NewState
}

func (r *readRun) read(srv tfprotov6.ProviderServer, state *tfprotov6.DynamicValue, private []byte) *tfprotov6.ReadResourceResponse {
	r.t.Helper()
	resp, err := srv.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName: r.rt.typeName, CurrentState: state, Private: private,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

// compare reads state and private through the wrapper and through the
// framework alone, while the object stays as it is, and requires the same
// answer; the wrapper's read must cost one GET and be answered by the fast
// path exactly when fast.
func (r *readRun) compare(t *testing.T, srv readServers, state *tfprotov6.DynamicValue, private []byte, fast bool) *tfprotov6.ReadResourceResponse {
	t.Helper()
	return r.compareWhen(t, srv, state, private, func(string) bool { return fast })
}

// compareWhen is compare, the fast path required when fastAt(the object's
// resourceVersion at the read).
func (r *readRun) compareWhen(t *testing.T, srv readServers, state *tfprotov6.DynamicValue, private []byte, fastAt func(rv string) bool) *tfprotov6.ReadResourceResponse {
	t.Helper()
	for attempt := 0; ; attempt++ {
		rvBefore := r.resourceVersion(t)
		fast := fastAt(rvBefore)
		f0, d0 := fastpath.ReadCounts()
		n0 := kube.RequestCount()
		got := r.read(srv.fast, state, private)
		gets := kube.RequestCount() - n0
		f1, d1 := fastpath.ReadCounts()
		want := r.read(srv.framework, state, private)
		if rv := r.resourceVersion(t); rv != rvBefore && attempt < 5 {
			// The controller changed the object between the two reads.
			time.Sleep(500 * time.Millisecond)
			continue
		}
		if answered := f1 > f0; answered != fast || f1-f0+d1-d0 != 1 {
			t.Errorf("answered by the fast path: %v (%d fast, %d to the framework), want %v", answered, f1-f0, d1-d0, fast)
		}
		if gets != 1 {
			t.Errorf("the read through the wrapper sent %d requests, want 1 GET", gets)
		}
		if g, w := diagStrings(got.Diagnostics), diagStrings(want.Diagnostics); g != w {
			t.Errorf("diagnostics:\n got  %s\n want %s", g, w)
		}
		if (got.NewState == nil) != (want.NewState == nil) {
			t.Fatalf("new state: got %v, want %v", got.NewState, want.NewState)
		}
		if want.NewState != nil {
			gv, err1 := got.NewState.Unmarshal(r.typ)
			wv, err2 := want.NewState.Unmarshal(r.typ)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !gv.Equal(wv) {
				diffs, _ := gv.Diff(wv)
				t.Errorf("new state differs: %v", diffs)
			}
		}
		if g, w := withoutMarker(t, got.Private), withoutMarker(t, want.Private); !bytes.Equal(g, w) {
			t.Errorf("private state (without the read marker): got %s, want %s", g, w)
		}
		if (got.Deferred == nil) != (want.Deferred == nil) || (got.NewIdentity == nil) != (want.NewIdentity == nil) {
			t.Errorf("deferred/identity: got %v %v, want %v %v", got.Deferred, got.NewIdentity, want.Deferred, want.NewIdentity)
		}
		r.checkMarker(t, state, got)
		return got
	}
}

func (r *readRun) resourceVersion(t *testing.T) string {
	t.Helper()
	obj, err := acctest.GetObject(t.Context(), r.ref)
	if err != nil {
		return "gone"
	}
	return obj.GetResourceVersion()
}

// withLabel returns state with labels[k] = v.
func (r *readRun) withLabel(state *tfprotov6.DynamicValue, k, v string) *tfprotov6.DynamicValue {
	t := r.t
	t.Helper()
	sv, err := state.Unmarshal(r.typ)
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := sv.As(&attrs); err != nil {
		t.Fatal(err)
	}
	var labels map[string]tftypes.Value
	if err := attrs["labels"].As(&labels); err != nil {
		t.Fatal(err)
	}
	nl := map[string]tftypes.Value{k: tftypes.NewValue(tftypes.String, v)}
	for lk, lv := range labels {
		nl[lk] = lv
	}
	attrs["labels"] = tftypes.NewValue(attrs["labels"].Type(), nl)
	d, err := tfprotov6.NewDynamicValue(r.typ, tftypes.NewValue(r.typ, attrs))
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

func mustNull(t *testing.T, typ tftypes.Type) *tfprotov6.DynamicValue {
	t.Helper()
	d, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

func privateKeys(t *testing.T, private []byte) map[string][]byte {
	t.Helper()
	keys := map[string][]byte{}
	if len(private) > 0 {
		if err := json.Unmarshal(private, &keys); err != nil {
			t.Fatalf("private state %s: %v", private, err)
		}
	}
	return keys
}

// checkMarker fails t unless the wrapper's answer carries a read marker
// exactly when it answered the state it was given (same value), and that
// marker describes the object as it is (its resourceVersion).
func (r *readRun) checkMarker(t *testing.T, state *tfprotov6.DynamicValue, got *tfprotov6.ReadResourceResponse) {
	t.Helper()
	same := false
	if got.NewState != nil {
		gv, err1 := got.NewState.Unmarshal(r.typ)
		sv, err2 := state.Unmarshal(r.typ)
		same = err1 == nil && err2 == nil && !gv.IsNull() && gv.Equal(sv)
	}
	if !hasMarker(t, got.Private) {
		if same && len(got.Diagnostics) == 0 && len(withoutMarker(t, got.Private)) == 0 {
			t.Errorf("a read that answered the state it was given, with nothing else in the private state, left no read marker")
		}
		return
	}
	if !same {
		t.Errorf("a read whose answer is not the state it was given left a read marker: %s", got.Private)
	}
	if rv, _ := markerField(t, got.Private, "rv").(string); rv != r.resourceVersion(t) {
		t.Errorf("the read marker holds resourceVersion %q, the object has %q", rv, r.resourceVersion(t))
	}
}

func hasMarker(t *testing.T, private []byte) bool {
	_, ok := privateKeys(t, private)[fastpath.ReadMarkerKey]
	return ok
}

func withoutMarker(t *testing.T, private []byte) []byte {
	keys := privateKeys(t, private)
	delete(keys, fastpath.ReadMarkerKey)
	if len(keys) == 0 {
		return nil
	}
	b, err := json.Marshal(keys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withKey returns private with key set to the JSON value v.
func withKey(t *testing.T, private []byte, key, v string) []byte {
	keys := privateKeys(t, private)
	keys[key] = []byte(v)
	b, err := json.Marshal(keys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func markerField(t *testing.T, private []byte, field string) any {
	var m map[string]any
	if err := json.Unmarshal(privateKeys(t, private)[fastpath.ReadMarkerKey], &m); err != nil {
		t.Fatal(err)
	}
	return m[field]
}

// markerWith returns private with the marker's field set to v.
func markerWith(t *testing.T, private []byte, field string, v any) []byte {
	keys := privateKeys(t, private)
	var m map[string]any
	if err := json.Unmarshal(keys[fastpath.ReadMarkerKey], &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m[field]; !ok {
		t.Fatalf("the marker has no field %q: %s", field, keys[fastpath.ReadMarkerKey])
	}
	m[field] = v
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return withKey(t, private, fastpath.ReadMarkerKey, string(b))
}

func diagStrings(ds []*tfprotov6.Diagnostic) string {
	var out string
	for _, d := range ds {
		out += fmt.Sprintf("%s|%s|%s|%s\n", d.Severity, pt.AttributePath(d.Attribute), d.Summary, d.Detail)
	}
	return out
}
