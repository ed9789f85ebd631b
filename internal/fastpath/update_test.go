package fastpath

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// updateSchema is the synthetic schema of the create tests with plan
// modifiers an update runs: UseStateForUnknown on a string and a list,
// RequiresReplace on name, and a modifier inert while unchanged below a
// list of objects (the update is the fast path's only while that list is
// unchanged).
func updateSchema() schema.Schema {
	s := syntheticSchema()
	s.Attributes["name"] = schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}
	s.Attributes["keep"] = schema.StringAttribute{Optional: true, Computed: true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	s.Attributes["keep_list"] = schema.ListAttribute{ElementType: types.StringType, Computed: true,
		PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()}}
	s.Attributes["guarded"] = schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{
		Attributes: map[string]schema.Attribute{"q": schema.StringAttribute{Optional: true, PlanModifiers: []planmodifier.String{inertUpdate{}}}}}}
	return s
}

// inertUpdate is a provider modifier marked inert while unchanged and
// without prior state.
type inertUpdate struct{ inert }

func (inertUpdate) InertOnCreate() {}

func TestEligibleUpdate(t *testing.T) {
	withAttr := func(name string, a schema.Attribute) schema.Schema {
		s := updateSchema()
		s.Attributes[name] = a
		return s
	}
	nested := func(a schema.Attribute) schema.Attribute {
		return schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{"x": a}}}
	}
	for _, tc := range []struct {
		name   string
		schema schema.Schema
		why    string
	}{
		{"UseStateForUnknown, RequiresReplace, a marked modifier below the top level", updateSchema(), ""},
		{"an unknown modifier", withAttr("z", schema.StringAttribute{Optional: true,
			PlanModifiers: []planmodifier.String{changesPlans{}}}), "z: plan modifier fastpath.changesPlans"},
		// It acts on unknown planned values only, and a state holds none:
		// nothing while z is unchanged.
		{"UseStateForUnknown below the top level", withAttr("z", nested(schema.StringAttribute{Optional: true, Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}})), ""},
		{"an unknown modifier below the top level", withAttr("z", nested(schema.StringAttribute{Optional: true,
			PlanModifiers: []planmodifier.String{changesPlans{}}})), "z.x: plan modifier fastpath.changesPlans"},
		{"a block's plan modifier", func() schema.Schema {
			s := updateSchema()
			s.Blocks["z"] = schema.SingleNestedBlock{PlanModifiers: []planmodifier.Object{changesPlansObject{}}}
			return s
		}(), "z: "},
		{"what creates refuse", withAttr("z", schema.StringAttribute{Optional: true, WriteOnly: true}), "z: write-only attribute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, "test", []func() resource.Resource{func() resource.Resource { return fakeResource{tc.schema} }}, nil)
			ok, why := s.EligibleUpdate(context.Background(), "test_fake")
			if ok != (tc.why == "") || !strings.HasPrefix(why, tc.why) {
				t.Errorf("eligible = %v (%q), want %v (%q)", ok, why, tc.why == "", tc.why)
			}
		})
	}
}

type changesPlansObject struct{ changesPlans }

func (changesPlansObject) PlanModifyObject(context.Context, planmodifier.ObjectRequest, *planmodifier.ObjectResponse) {
}

// TestPlanUpdateSynthetic plans updates of the synthetic schema from
// several prior states to several configurations through the framework and
// the fast path and requires the same answer; the fast path must answer
// every update that keeps the name and the guarded list.
func TestPlanUpdateSynthetic(t *testing.T) {
	ctx := context.Background()
	framework, fast := syntheticServers(t, updateSchema())
	typ := updateSchema().Type().TerraformType(ctx).(tftypes.Object)
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	obj := objectOf
	innerT := typ.AttributeTypes["list"].(tftypes.List).ElementType
	inner := func(attrs map[string]tftypes.Value) tftypes.Value { return obj(innerT, attrs) }
	guardedT := typ.AttributeTypes["guarded"].(tftypes.List)
	guarded := func(q string) tftypes.Value {
		return tftypes.NewValue(guardedT, []tftypes.Value{obj(guardedT.ElementType, map[string]tftypes.Value{"q": str(q)})})
	}
	tags := func(v string) tftypes.Value {
		return tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"k": str(v)})
	}
	configs := map[string]map[string]tftypes.Value{
		"minimal": {"name": str("a")},
		"top-level values": {"name": str("a"), "mode": str("manual"), "keep": str("mine"), "size": tftypes.NewValue(tftypes.Number, 3),
			"guarded": guarded("1Gi")},
		"nested": {"name": str("a"), "guarded": guarded("1Gi"),
			"single": obj(typ.AttributeTypes["single"], map[string]tftypes.Value{"deep": inner(map[string]tftypes.Value{"s": str("s"), "tags": tags("v")})}),
			"list":   tftypes.NewValue(typ.AttributeTypes["list"], []tftypes.Value{inner(map[string]tftypes.Value{"n": tftypes.NewValue(tftypes.Number, 1)})}),
			"one":    obj(typ.AttributeTypes["one"], map[string]tftypes.Value{"s": str("s")}),
		},
		"nested changed": {"name": str("a"), "guarded": guarded("1Gi"), "mode": str("auto"),
			"single": obj(typ.AttributeTypes["single"], map[string]tftypes.Value{"deep": inner(map[string]tftypes.Value{"s": str("t"), "d": str("mine")})}),
			"list":   tftypes.NewValue(typ.AttributeTypes["list"], []tftypes.Value{inner(nil), inner(map[string]tftypes.Value{"s": str("2")})}),
		},
		"unknowns": {"name": str("a"), "keep": unknown(tftypes.String), "guarded": guarded("1Gi"),
			"list": tftypes.NewValue(typ.AttributeTypes["list"], []tftypes.Value{inner(map[string]tftypes.Value{"s": unknown(tftypes.String)})}),
			"map":  unknown(typ.AttributeTypes["map"])},
		// Not the fast path's: a replacement, and a change below the marked
		// modifier.
		"renamed":         {"name": str("b"), "guarded": guarded("1Gi")},
		"guarded changed": {"name": str("a"), "guarded": guarded("1024Mi")},
	}
	plan := func(t *testing.T, srv tfprotov6.ProviderServer, prior, proposed, config tftypes.Value) *tfprotov6.PlanResourceChangeResponse {
		t.Helper()
		dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
			d, err := tfprotov6.NewDynamicValue(typ, v)
			if err != nil {
				t.Fatal(err)
			}
			return &d
		}
		resp, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "test_fake",
			PriorState: dv(prior), ProposedNewState: dv(proposed), Config: dv(config)})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// A prior state: the framework's plan of a create of cfg, its
	// unknowns made known as an apply would.
	state := func(t *testing.T, cfg tftypes.Value) tftypes.Value {
		t.Helper()
		resp := plan(t, framework, tftypes.NewValue(typ, nil), cfg, cfg)
		v, err := resp.PlannedState.Unmarshal(typ)
		if err != nil {
			t.Fatal(err)
		}
		known, err := tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
			switch {
			case v.IsKnown():
				return v, nil
			case v.Type().Is(tftypes.String):
				return str("applied " + p.String()), nil
			case v.Type().Is(tftypes.List{ElementType: tftypes.String}):
				return tftypes.NewValue(v.Type(), []tftypes.Value{str("applied")}), nil
			}
			return tftypes.NewValue(v.Type(), nil), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return known
	}
	answered := 0
	for priorName, priorAttrs := range configs {
		if priorName == "unknowns" || priorName == "renamed" {
			continue
		}
		for cfgName, cfgAttrs := range configs {
			t.Run(fmt.Sprintf("%s to %s", priorName, cfgName), func(t *testing.T) {
				prior := state(t, obj(typ, priorAttrs))
				cfg := obj(typ, cfgAttrs)
				// As Terraform proposes: the configuration, and for computed
				// top-level attributes it leaves null, the prior value.
				proposed := map[string]tftypes.Value{}
				var pa map[string]tftypes.Value
				_ = prior.As(&pa)
				var ca map[string]tftypes.Value
				_ = cfg.As(&ca)
				for n, v := range ca {
					proposed[n] = v
					if v.IsNull() && (n == "id" || n == "keep" || n == "keep_list" || n == "mode" || n == "computed_single" || n == "defaulted" || n == "plain_object") {
						proposed[n] = pa[n]
					}
				}
				pv := tftypes.NewValue(typ, proposed)
				if pv.Equal(prior) {
					t.Skip("no change")
				}
				want := plan(t, framework, prior, pv, cfg)
				u0, _ := UpdateCounts()
				got := plan(t, fast, prior, pv, cfg)
				u1, _ := UpdateCounts()
				if len(want.Diagnostics) > 0 || len(got.Diagnostics) > 0 {
					t.Fatalf("diagnostics: framework %v, fast path %v", want.Diagnostics, got.Diagnostics)
				}
				wv, _ := want.PlannedState.Unmarshal(typ)
				gv, _ := got.PlannedState.Unmarshal(typ)
				if !gv.Equal(wv) {
					diffs, _ := gv.Diff(wv)
					for _, df := range diffs {
						t.Errorf("at %s: got %v, want %v", df.Path, df.Value1, df.Value2)
					}
				}
				if fmt.Sprint(got.RequiresReplace) != fmt.Sprint(want.RequiresReplace) {
					t.Errorf("requires replace: got %v, want %v", got.RequiresReplace, want.RequiresReplace)
				}
				fastOne := u1 > u0
				g := func(attrs map[string]tftypes.Value) tftypes.Value {
					if v, ok := attrs["guarded"]; ok {
						return v
					}
					return tftypes.NewValue(guardedT, nil)
				}
				mustNot := cfgName == "renamed" || !g(priorAttrs).Equal(g(cfgAttrs))
				switch {
				case mustNot && fastOne:
					t.Errorf("answered by the fast path")
				case !mustNot && !fastOne:
					t.Errorf("not answered by the fast path")
				}
				if fastOne {
					answered++
				}
			})
		}
	}
	if answered < 10 {
		t.Errorf("the fast path answered %d updates, want at least 10", answered)
	}
}
