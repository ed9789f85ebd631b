package tfvalues_test

import (
	"context"
	"iter"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// tfvalues.ValueFromTerraform must give what the framework's
// ValueFromTerraform gives: the same value (Equal compares types and
// values at every level) or an error where it errs. Random values (nulls
// and unknowns at every level) of the schema type of every resource type
// of the provider, as the provider builds its schemas (precomputed types).
func TestValueFromTerraform_sameAsTheFramework(t *testing.T) {
	ctx := context.Background()
	for name, s := range resourceSchemas() {
		typ := s.Type()
		t.Run(name, func(t *testing.T) {
			tfType := typ.TerraformType(ctx)
			rnd := rand.New(rand.NewPCG(7, uint64(len(name))))
			for i := 0; i < 150; i++ {
				v := pt.RandomValue(rnd, tfType, i%2 == 0)
				checkFromTerraform(t, typ, v)
				if t.Failed() {
					return
				}
			}
		})
	}
}

func TestValueFromTerraform_collectionsAndErrors(t *testing.T) {
	obj := types.ObjectType{AttrTypes: map[string]attr.Type{"n": types.Int64Type, "s": types.SetType{ElemType: types.StringType}}}
	for _, typ := range []attr.Type{
		types.MapType{ElemType: types.ListType{ElemType: obj}},
		types.SetType{ElemType: types.Float64Type},
		types.ListType{ElemType: types.MapType{ElemType: types.BoolType}},
		tfvalues.WholeNumberType{},
	} {
		rnd := rand.New(rand.NewPCG(3, 9))
		for i := 0; i < 200; i++ {
			checkFromTerraform(t, typ, pt.RandomValue(rnd, typ.TerraformType(context.Background()), i%2 == 0))
		}
	}
	// A value of another type: the framework's error.
	checkFromTerraform(t, obj, tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"n": tftypes.String}},
		map[string]tftypes.Value{"n": tftypes.NewValue(tftypes.String, "x")}))
	checkFromTerraform(t, types.ListType{ElemType: types.StringType}, tftypes.NewValue(tftypes.List{ElementType: tftypes.Number}, nil))
	// No type at all (the framework's null).
	checkFromTerraform(t, obj, tftypes.Value{})
}

func checkFromTerraform(t *testing.T, typ attr.Type, v tftypes.Value) {
	t.Helper()
	ctx := context.Background()
	want, wantErr := typ.ValueFromTerraform(ctx, v)
	got, gotErr := tfvalues.ValueFromTerraform(ctx, typ, v)
	switch {
	case (wantErr == nil) != (gotErr == nil):
		t.Errorf("%s: error %v, the framework's %v", v, gotErr, wantErr)
	case wantErr != nil:
		// Several invalid numbers: which one the error names depends on
		// map order, in the framework too; a type mismatch is caught
		// first, at the top, by both.
		if v.Type() != nil && !v.Type().Equal(typ.TerraformType(ctx)) && gotErr.Error() != wantErr.Error() {
			t.Errorf("error %q, the framework's %q", gotErr, wantErr)
		}
	case reflect.DeepEqual(got, want):
		// (A whole number holding a fraction is never Equal, even to
		// itself.)
	case !got.Equal(want) || !got.Type(ctx).Equal(want.Type(ctx)) || got.String() != want.String():
		t.Errorf("%s:\n got  %s\n want %s", v, got, want)
	}
}

// tfvalues.SetPlanAttribute must leave the plan the framework's
// SetAttribute leaves: for every top-level attribute of every resource
// type, on random plans (nulls and unknowns at every level), set to random
// values of the attribute's type (as the schema's attribute type converts
// them), to the value the plan holds already, and to a value of another
// type (the framework's error).
func TestSetPlanAttribute_sameAsTheFramework(t *testing.T) {
	ctx := context.Background()
	for name, s := range resourceSchemas() {
		t.Run(name, func(t *testing.T) {
			tfType := s.Type().TerraformType(ctx)
			rnd := rand.New(rand.NewPCG(11, uint64(len(name))))
			checked := 0
			defer func() {
				if checked < 40 {
					t.Errorf("only %d values set", checked)
				}
			}()
			for i := 0; i < 40 && !t.Failed(); i++ {
				raw := pt.RandomValue(rnd, tfType, i%2 == 0)
				if raw.IsNull() || !raw.IsKnown() {
					continue
				}
				var attrs map[string]tftypes.Value
				if err := raw.As(&attrs); err != nil {
					t.Fatal(err)
				}
				for name, a := range s.Attributes {
					at := a.GetType()
					// A random number need not fit an Int64 attribute: such
					// values are skipped (no attr.Value holds them).
					for _, tv := range []tftypes.Value{pt.RandomValue(rnd, at.TerraformType(ctx), i%3 == 0), attrs[name]} {
						if v, err := at.ValueFromTerraform(ctx, tv); err == nil {
							checkSetPlanAttribute(t, s, raw, path.Root(name), v)
							checked++
						}
					}
				}
				checkSetPlanAttribute(t, s, raw, path.Root("name"), types.BoolValue(true))
				checkSetPlanAttribute(t, s, raw, path.Root("no_such_attribute"), types.StringValue("x"))
			}
		})
	}
}

func checkSetPlanAttribute(t *testing.T, s schema.Schema, raw tftypes.Value, p path.Path, v attr.Value) {
	t.Helper()
	ctx := context.Background()
	want := tfsdk.Plan{Schema: s, Raw: raw.Copy()}
	wantDiags := want.SetAttribute(ctx, p, v)
	in := raw.Copy()
	got := tfsdk.Plan{Schema: s, Raw: in}
	gotDiags := tfvalues.SetPlanAttribute(ctx, &got, p, v)
	// The value handed in is also the request's (and may be the prior
	// state's): it must keep its value.
	if !in.Equal(raw) {
		t.Fatalf("set %s to %v: the value the plan held was changed in place", p, v)
	}
	if wantDiags.HasError() != gotDiags.HasError() {
		t.Fatalf("set %s to %v: errors %v, the framework's %v", p, v, gotDiags, wantDiags)
	}
	if !got.Raw.Equal(want.Raw) {
		d, _ := got.Raw.Diff(want.Raw)
		t.Fatalf("set %s to %v: the plan differs from the framework's: %v", p, v, d)
	}
}

// resourceSchemas yields every resource type of the provider, by name,
// with its schema as the provider builds it, in the provider's order.
func resourceSchemas() iter.Seq2[string, schema.Schema] {
	return func(yield func(string, schema.Schema) bool) {
		ctx := context.Background()
		for _, f := range provider.New("test")().Resources(ctx) {
			r := f()
			var meta resource.MetadataResponse
			r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "agentsandbox"}, &meta)
			var sresp resource.SchemaResponse
			r.Schema(ctx, resource.SchemaRequest{}, &sresp)
			if !yield(meta.TypeName, sresp.Schema) {
				return
			}
		}
	}
}

// TypeIs must say what tftypes.Type.Equal says of the framework's Terraform
// type, on random pairs of types (equal ones, ones that differ somewhere
// deep, optional attributes, missing element types) and on every resource
// schema of the provider against itself and against the others.
func TestTypeIs_sameAsEqual(t *testing.T) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(11, 5))
	check := func(a attr.Type, tt tftypes.Type) {
		t.Helper()
		if got, want := tfvalues.TypeIs(ctx, a, tt), tt.Equal(a.TerraformType(ctx)); got != want {
			t.Fatalf("TypeIs(%s, %s) = %t, Equal says %t", a, tt, got, want)
		}
	}
	equal := 0
	for i := 0; i < 3000; i++ {
		a := randomAttrType(rnd, 3)
		tt := a.TerraformType(ctx)
		if rnd.IntN(3) > 0 {
			tt = mutateType(rnd, tt)
		}
		if tt.Equal(a.TerraformType(ctx)) {
			equal++
		}
		check(a, tt)
		check(a, randomAttrType(rnd, 2).TerraformType(ctx))
	}
	if equal < 500 || equal > 2500 {
		t.Fatalf("%d of 3000 pairs equal: the generator tests too little of one side", equal)
	}
	var all []attr.Type
	for _, s := range resourceSchemas() {
		all = append(all, s.Type())
	}
	for _, a := range all {
		for _, b := range all {
			check(a, b.TerraformType(ctx))
		}
	}
	check(types.ObjectType{}, tftypes.Object{})
	check(types.ObjectType{AttrTypes: map[string]attr.Type{}}, tftypes.Object{})
	check(types.ListType{}, tftypes.List{ElementType: tftypes.DynamicPseudoType})
	check(tfvalues.WholeNumberType{}, tftypes.Number)
	check(tfvalues.WholeNumberType{}, tftypes.String)
}

func randomAttrType(rnd *rand.Rand, depth int) attr.Type {
	prims := []attr.Type{types.StringType, types.BoolType, types.Int64Type, types.Int32Type, types.Float64Type,
		types.Float32Type, types.NumberType, types.DynamicType, tfvalues.WholeNumberType{}}
	if depth == 0 || rnd.IntN(3) == 0 {
		return prims[rnd.IntN(len(prims))]
	}
	switch rnd.IntN(4) {
	case 0:
		return types.ListType{ElemType: randomAttrType(rnd, depth-1)}
	case 1:
		return types.SetType{ElemType: randomAttrType(rnd, depth-1)}
	case 2:
		return types.MapType{ElemType: randomAttrType(rnd, depth-1)}
	}
	o := types.ObjectType{AttrTypes: map[string]attr.Type{}}
	for i := range rnd.IntN(4) {
		o.AttrTypes[string(rune('a'+i))] = randomAttrType(rnd, depth-1)
	}
	return o
}

// mutateType changes tt at one random place (or, rarely, nowhere).
func mutateType(rnd *rand.Rand, tt tftypes.Type) tftypes.Type {
	switch v := tt.(type) {
	case tftypes.List:
		if rnd.IntN(3) == 0 {
			return tftypes.Set(v)
		}
		if rnd.IntN(5) == 0 {
			return tftypes.List{}
		}
		return tftypes.List{ElementType: mutateType(rnd, v.ElementType)}
	case tftypes.Set:
		if rnd.IntN(3) == 0 {
			return tftypes.Map(v)
		}
		return tftypes.Set{ElementType: mutateType(rnd, v.ElementType)}
	case tftypes.Map:
		if rnd.IntN(3) == 0 {
			return tftypes.List(v)
		}
		return tftypes.Map{ElementType: mutateType(rnd, v.ElementType)}
	case tftypes.Object:
		out := tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}
		for k, a := range v.AttributeTypes {
			out.AttributeTypes[k] = a
		}
		switch rnd.IntN(5) {
		case 0:
			out.AttributeTypes["zz"] = tftypes.String
		case 1:
			for k := range out.AttributeTypes {
				out.OptionalAttributes = map[string]struct{}{k: {}}
				break
			}
		case 2:
			for k := range out.AttributeTypes {
				delete(out.AttributeTypes, k)
				break
			}
		case 3:
			return tftypes.Object{}
		default:
			for k, a := range out.AttributeTypes {
				out.AttributeTypes[k] = mutateType(rnd, a)
				break
			}
		}
		return out
	}
	prims := []tftypes.Type{tftypes.String, tftypes.Number, tftypes.Bool, tftypes.DynamicPseudoType, tt}
	return prims[rnd.IntN(len(prims))]
}
