package fastpath_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// An apply through the wrapper marks the new state it returns, so that the
// next refresh of the unchanged object is the fast path's (apply.go). For
// every eligible type: create through the wrapper, require a marker of the
// object as it is, then read the new state as Terraform sends it back
// (go-cty's msgpack of the value, not the framework's bytes) through the
// wrapper and through the framework alone, and require the fast path's
// answer to be the framework's (readRun.compare: same state, diagnostics
// and private state, one GET).
func TestAccApplyMarker_nextReadIsTheFastPaths(t *testing.T) {
	ns, s, main := accSetup(t)
	for _, rt := range readTypes() {
		t.Run(rt.typeName, func(t *testing.T) {
			r := &readRun{t: t, s: s, rt: rt, srv: main, typ: s.ResourceType(t, rt.typeName), ref: acctest.ObjectRef{GVR: rt.gvr, Namespace: ns, Name: "apply-" + rt.gvr.Resource}}
			m0, u0 := fastpath.ApplyMarkCounts()
			applied := r.applyThrough(main.fast)
			m1, u1 := fastpath.ApplyMarkCounts()
			if m1-m0 != 1 || u1-u0 != 0 {
				t.Fatalf("applies marked %d, unmarked %d; want the create marked", m1-m0, u1-u0)
			}
			if !hasMarker(t, applied.Private) {
				t.Fatalf("the create's private state holds no read marker: %s", applied.Private)
			}
			// The fast path must answer while the object is as the marker
			// saw it; the release's controller may update it after the
			// create (a pool's status, a template's label), and then the
			// framework must.
			marked, _ := markerField(t, applied.Private, "rv").(string)
			r.compareWhen(t, main, terraformBytes(t, r, applied.NewState), applied.Private, func(rv string) bool {
				if rv != marked {
					t.Logf("the object changed since the apply (marker at %s, object at %s)", marked, rv)
				}
				return rv == marked
			})
		})
	}
}

// applyThrough plans and applies the create of the object through srv,
// as Terraform does.
func (r *readRun) applyThrough(srv tfprotov6.ProviderServer) *tfprotov6.ApplyResourceChangeResponse {
	return r.applyConfigThrough(srv, pt.Dynamic(r.t, r.typ, r.rt.cfg(r.ref.Namespace, r.ref.Name)))
}

// applyConfigThrough plans and applies the create of cfg through srv.
func (r *readRun) applyConfigThrough(srv tfprotov6.ProviderServer, cfg *tfprotov6.DynamicValue) *tfprotov6.ApplyResourceChangeResponse {
	t := r.t
	t.Helper()
	null := mustNull(t, r.typ)
	plan, err := srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: r.rt.typeName, PriorState: null, ProposedNewState: cfg, Config: cfg,
	})
	if err != nil || len(pt.Errors(plan.Diagnostics)) > 0 {
		t.Fatalf("plan: %v %s", err, pt.Describe(plan.Diagnostics))
	}
	applied, err := srv.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: r.rt.typeName, PriorState: null, PlannedState: plan.PlannedState, Config: cfg,
		PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatalf("apply: %v %s", err, pt.Describe(applied.Diagnostics))
	}
	return applied
}

// terraformBytes is state as Terraform sends it to the provider: decoded
// into a cty value and encoded with go-cty's msgpack.
func terraformBytes(t *testing.T, r *readRun, state *tfprotov6.DynamicValue) *tfprotov6.DynamicValue {
	t.Helper()
	v, err := state.Unmarshal(r.typ)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ctymsgpack.Marshal(toCty(t, v, r.typ), toCtyType(r.typ))
	if err != nil {
		t.Fatal(err)
	}
	return &tfprotov6.DynamicValue{MsgPack: b}
}

// An apply through the wrapper also certifies the plan of its new state
// under its configuration (plan.go): the next plan with that state (as
// prior and proposed state), that configuration, the provider configured
// alike, by the same binary, without deferral, is answered from the
// marker, without the framework; the answer must be the framework's. For
// every eligible type: create through the wrapper with the configuration
// as Terraform encodes it, require a plan marker exactly when unchanged
// plans of the type are the fast path's, then plan through both servers;
// then every input the marker does not name, which must go on to the
// unchanged plan or the framework.
func TestAccPlanMarker_answersAsTheFramework(t *testing.T) {
	ns, s, main := accSetup(t)
	other := newReadServers(t, s, "another-field-manager")
	ctx := context.Background()
	for _, rt := range readTypes() {
		t.Run(rt.typeName, func(t *testing.T) {
			r := &readRun{t: t, s: s, rt: rt, srv: main, typ: s.ResourceType(t, rt.typeName), ref: acctest.ObjectRef{GVR: rt.gvr, Namespace: ns, Name: "plan-" + rt.gvr.Resource}}
			cfgOf := func(label string) *tfprotov6.DynamicValue {
				c := rt.cfg(ns, r.ref.Name)
				if label != "" {
					c["labels"] = map[string]any{"changed": label}
				}
				return terraformBytes(t, r, pt.Dynamic(t, r.typ, c))
			}
			cfg := cfgOf("")
			applied := r.applyConfigThrough(main.fast, cfg)
			state := terraformBytes(t, r, applied.NewState)
			if eligible, why := main.fast.Eligible(ctx, rt.typeName); !eligible {
				t.Fatalf("%s: unchanged plans not eligible for the fast path: %s", rt.typeName, why)
			}
			if markerField(t, applied.Private, "plan") == nil {
				t.Fatalf("the create's read marker holds no plan marker: %s", applied.Private)
			}
			plan := func(srv tfprotov6.ProviderServer, prior, proposed, config *tfprotov6.DynamicValue, private []byte, deferral bool) (*tfprotov6.PlanResourceChangeResponse, bool) {
				t.Helper()
				n0 := fastpath.PlanMarkerCount()
				req := &tfprotov6.PlanResourceChangeRequest{
					TypeName: rt.typeName, PriorState: prior, ProposedNewState: proposed, Config: config, PriorPrivate: private,
				}
				if deferral {
					req.ClientCapabilities = &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: true}
				}
				resp, err := srv.PlanResourceChange(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return resp, fastpath.PlanMarkerCount()-n0 == 1
			}

			fast, byMarker := plan(main.fast, state, state, cfg, applied.Private, false)
			if !byMarker {
				t.Fatal("the plan the apply certified was not answered from its marker")
			}
			fw, _ := plan(main.framework, state, state, cfg, withoutMarker(t, applied.Private), false)
			if len(fw.Diagnostics) > 0 || len(fw.RequiresReplace) > 0 || fw.Deferred != nil || len(fw.PlannedPrivate) > 0 {
				t.Fatalf("the framework's plan: %s, replace %v, deferred %v, private %s", diagStrings(fw.Diagnostics), fw.RequiresReplace, fw.Deferred, fw.PlannedPrivate)
			}
			fv, err1 := fw.PlannedState.Unmarshal(r.typ)
			sv, err2 := state.Unmarshal(r.typ)
			if err1 != nil || err2 != nil || !fv.Equal(sv) {
				d, _ := fv.Diff(sv)
				t.Fatalf("the framework plans a change of the applied state (%v %v): %v", err1, err2, d)
			}
			if !bytes.Equal(fast.PlannedState.MsgPack, state.MsgPack) || !bytes.Equal(fast.PlannedPrivate, applied.Private) ||
				len(fast.Diagnostics) > 0 || len(fast.RequiresReplace) > 0 || fast.Deferred != nil {
				t.Fatalf("the marker's answer is not the prior state and private state as they are: %+v", fast)
			}

			changed := r.withLabel(applied.NewState, "out-of-band", "yes")
			for _, c := range []struct {
				name            string
				srv             tfprotov6.ProviderServer
				prior, proposed *tfprotov6.DynamicValue
				config          *tfprotov6.DynamicValue
				private         []byte
				deferral        bool
			}{
				{name: "another configuration", srv: main.fast, prior: state, proposed: state, config: cfgOf("yes"), private: applied.Private},
				{name: "another state", srv: main.fast, prior: terraformBytes(t, r, changed), proposed: terraformBytes(t, r, changed), config: cfg, private: applied.Private},
				{name: "a proposed change", srv: main.fast, prior: state, proposed: terraformBytes(t, r, changed), config: cfg, private: applied.Private},
				{name: "another provider configuration", srv: other.fast, prior: state, proposed: state, config: cfg, private: applied.Private},
				{name: "another binary", srv: main.fast, prior: state, proposed: state, config: cfg, private: markerWith(t, applied.Private, "binary", "go-build-id/of/another/binary")},
				{name: "another type", srv: main.fast, prior: state, proposed: state, config: cfg, private: markerWith(t, applied.Private, "type", "agentsandbox_other")},
				{name: "deferral allowed", srv: main.fast, prior: state, proposed: state, config: cfg, private: applied.Private, deferral: true},
				{name: "no plan marker", srv: main.fast, prior: state, proposed: state, config: cfg, private: markerWith(t, applied.Private, "plan", nil)},
			} {
				if _, byMarker := plan(c.srv, c.prior, c.proposed, c.config, c.private, c.deferral); byMarker {
					t.Errorf("%s: answered from the plan marker", c.name)
				}
			}
		})
	}
}
