package tfvalues_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ToTerraform must give what the value's own ToTerraformValue gives: the
// same value of the same type, or an error where it errs. Random values
// (nulls and unknowns at every level) of every resource schema's type and
// of random collection and object types (whole numbers among them; dynamic
// values made by hand).
func TestToTerraform_sameAsTheFramework(t *testing.T) {
	ctx := context.Background()
	types_ := map[string]attr.Type{}
	for name, s := range resourceSchemas() {
		types_[name] = s.Type()
	}
	rnd := rand.New(rand.NewPCG(5, 8))
	for i := 0; len(types_) < 60; i++ {
		// (Random values of dynamic types are not generated: those are
		// below, made by hand.)
		if typ := randomAttrType(rnd, 4); !strings.Contains(typ.TerraformType(ctx).String(), "DynamicPseudoType") {
			types_[fmt.Sprintf("random %d", i)] = typ
		}
	}
	for name, typ := range types_ {
		t.Run(name, func(t *testing.T) {
			tt := typ.TerraformType(ctx)
			checked := 0
			for i := 0; i < 100 && !t.Failed(); i++ {
				v, err := typ.ValueFromTerraform(ctx, pt.RandomValue(rnd, tt, i%2 == 0))
				if err != nil {
					continue // a random number no Int64 holds
				}
				checkToTerraform(t, v)
				checked++
			}
			if checked < 20 {
				t.Errorf("only %d values checked", checked)
			}
		})
	}
	// Dynamic values: an attribute's, a list's (whose unknown and null
	// elements the framework handles itself), a map's.
	str, null := types.DynamicValue(types.StringValue("x")), types.DynamicNull()
	checkToTerraform(t, types.ObjectValueMust(map[string]attr.Type{"d": types.DynamicType, "e": types.DynamicType},
		map[string]attr.Value{"d": str, "e": null}))
	checkToTerraform(t, types.ListValueMust(types.DynamicType, []attr.Value{str, str}))
	checkToTerraform(t, types.ListValueMust(types.DynamicType, []attr.Value{str, types.DynamicUnknown()}))
	checkToTerraform(t, types.SetValueMust(types.DynamicType, []attr.Value{str}))
	checkToTerraform(t, types.MapValueMust(types.DynamicType, map[string]attr.Value{"a": str, "b": null}))
	// A value that errs below a collection: the framework's error.
	bad := basetypes.NewListValueMust(erring{}, []attr.Value{erringValue{}})
	checkToTerraform(t, types.ObjectValueMust(map[string]attr.Type{"l": bad.Type(ctx)}, map[string]attr.Value{"l": bad}))
	checkToTerraform(t, types.MapValueMust(bad.Type(ctx), map[string]attr.Value{"k": bad}))
	if v, err := tfvalues.ToTerraform(ctx, nil); err != nil || v.Type() != nil {
		t.Errorf("ToTerraform(nil) = %v, %v", v, err)
	}
}

func checkToTerraform(t *testing.T, v attr.Value) {
	t.Helper()
	ctx := context.Background()
	want, wantErr := v.ToTerraformValue(ctx)
	got, gotErr := tfvalues.ToTerraform(ctx, v)
	switch {
	case (wantErr == nil) != (gotErr == nil):
		t.Fatalf("%s: error %v, the framework's %v", v, gotErr, wantErr)
	case wantErr != nil:
		if gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s: error %q, the framework's %q", v, gotErr, wantErr)
		}
	case !got.Type().Equal(want.Type()) || !got.Equal(want):
		d, _ := got.Diff(want)
		t.Fatalf("%s:\n got  %s\n want %s\n diff %v", v, got, want, d)
	}
}

// erring is a string type whose values cannot be converted.
type erring struct{ basetypes.StringType }

func (erring) Equal(o attr.Type) bool { _, ok := o.(erring); return ok }

type erringValue struct{ basetypes.StringValue }

func (erringValue) Type(context.Context) attr.Type { return erring{} }
func (erringValue) ToTerraformValue(context.Context) (tftypes.Value, error) {
	return tftypes.Value{}, errTest
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "this value does not convert" }

// GetPlanAttribute, GetStateAttribute and GetConfigAttribute must read
// what GetAttribute reads, with the same diagnostics: every top-level
// attribute and block of every resource schema, on random values (nulls
// and unknowns at every level, a null or unknown whole value), into a
// generic attr.Value, into the value's own Go type and into a wrong one;
// and a name the schema does not have.
func TestGetAttribute_sameAsTheFramework(t *testing.T) {
	ctx := context.Background()
	for name, s := range resourceSchemas() {
		t.Run(name, func(t *testing.T) {
			tt := s.Type().TerraformType(ctx)
			rnd := rand.New(rand.NewPCG(13, uint64(len(name))))
			names := []string{"no_such_attribute"}
			for n := range s.Attributes {
				names = append(names, n)
			}
			for n := range s.Blocks {
				names = append(names, n)
			}
			for i := 0; i < 30 && !t.Failed(); i++ {
				raw := pt.RandomValue(rnd, tt, i%2 == 0)
				for _, n := range names {
					checkGetAttribute(t, s, raw, n)
				}
			}
		})
	}
}

func checkGetAttribute(t *testing.T, s schema.Schema, raw tftypes.Value, name string) {
	t.Helper()
	ctx := context.Background()
	p := path.Root(name)
	type getter struct {
		fast, slow func(any) diag.Diagnostics
	}
	plan, state, config := tfsdk.Plan{Schema: s, Raw: raw}, tfsdk.State{Schema: s, Raw: raw}, tfsdk.Config{Schema: s, Raw: raw}
	for _, g := range []getter{
		{func(x any) diag.Diagnostics { return tfvalues.GetPlanAttribute(ctx, plan, name, x) }, func(x any) diag.Diagnostics { return plan.GetAttribute(ctx, p, x) }},
		{func(x any) diag.Diagnostics { return tfvalues.GetStateAttribute(ctx, state, name, x) }, func(x any) diag.Diagnostics { return state.GetAttribute(ctx, p, x) }},
		{func(x any) diag.Diagnostics { return tfvalues.GetConfigAttribute(ctx, config, name, x) }, func(x any) diag.Diagnostics { return config.GetAttribute(ctx, p, x) }},
	} {
		var generic, want attr.Value
		wantDiags := g.slow(&want)
		gotDiags := g.fast(&generic)
		if !sameOutcome(gotDiags, wantDiags) || (want == nil) != (generic == nil) || (want != nil && !want.Equal(generic)) {
			t.Fatalf("%s into attr.Value: %v %v, the framework's %v %v", name, generic, gotDiags, want, wantDiags)
		}
		if want == nil {
			continue
		}
		// The value's own Go type, and a wrong one (the framework's error).
		for _, target := range []func() (any, func() attr.Value){
			func() (any, func() attr.Value) { x := new(types.Object); return x, func() attr.Value { return *x } },
			func() (any, func() attr.Value) { x := new(types.List); return x, func() attr.Value { return *x } },
			func() (any, func() attr.Value) { x := new(types.String); return x, func() attr.Value { return *x } },
			func() (any, func() attr.Value) { x := new(types.Map); return x, func() attr.Value { return *x } },
			func() (any, func() attr.Value) { x := new(types.Bool); return x, func() attr.Value { return *x } },
			func() (any, func() attr.Value) { x := new(types.Int64); return x, func() attr.Value { return *x } },
		} {
			a, av := target()
			b, bv := target()
			wantDiags, gotDiags := g.slow(b), g.fast(a)
			if !sameOutcome(gotDiags, wantDiags) || (!wantDiags.HasError() && !av().Equal(bv())) {
				t.Fatalf("%s into %T: %v %v, the framework's %v %v", name, a, av(), gotDiags, bv(), wantDiags)
			}
		}
	}
}

// sameOutcome compares diagnostics exactly, except an error's detail: where
// several numbers do not fit, which one it names depends on map order, in
// the framework too.
func sameOutcome(a, b diag.Diagnostics) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) && (a[i].Severity() != b[i].Severity() || a[i].Summary() != b[i].Summary()) {
			return false
		}
	}
	return true
}

// BenchmarkToTerraform converts a sandbox template's state (random values,
// fixed seed, the largest of 300) the framework's way and with ToTerraform;
// GetAttribute reads its pod template both ways.
func BenchmarkToTerraform(b *testing.B) {
	ctx := context.Background()
	var s schema.Schema
	for name, rs := range resourceSchemas() {
		if name == "agentsandbox_sandbox_template" {
			s = rs
		}
	}
	tt := s.Type().TerraformType(ctx)
	rnd := rand.New(rand.NewPCG(1, 2))
	raw, v := tftypes.NewValue(tt, nil), attr.Value(nil)
	for range 300 {
		r := pt.RandomValue(rnd, tt, false)
		if x, err := s.Type().ValueFromTerraform(ctx, r); err == nil && !r.IsNull() && len(r.String()) > len(raw.String()) {
			raw, v = r, x
		}
	}
	b.Run("framework", func(b *testing.B) {
		for b.Loop() {
			_, _ = v.ToTerraformValue(ctx)
		}
	})
	b.Run("ToTerraform", func(b *testing.B) {
		for b.Loop() {
			_, _ = tfvalues.ToTerraform(ctx, v)
		}
	})
	plan := tfsdk.Plan{Schema: s, Raw: raw}
	b.Run("framework GetAttribute", func(b *testing.B) {
		for b.Loop() {
			var o types.Object
			_ = plan.GetAttribute(ctx, path.Root("pod_template"), &o)
		}
	})
	b.Run("GetPlanAttribute", func(b *testing.B) {
		for b.Loop() {
			var o types.Object
			_ = tfvalues.GetPlanAttribute(ctx, plan, "pod_template", &o)
		}
	})
}
