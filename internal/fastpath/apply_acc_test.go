package fastpath_test

import (
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
			// saw it; the stand-in controller may update it after the
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
	t := r.t
	t.Helper()
	cfg := pt.Dynamic(t, r.typ, r.rt.cfg(r.ref.Namespace, r.ref.Name))
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
