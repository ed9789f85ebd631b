package tfvalues

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The fast paths must give exactly what the framework gives: the same
// values, and the framework's own diagnostics whenever it would refuse.

type fastEmbedded struct {
	Name   types.String `tfsdk:"name"`
	Labels types.Map    `tfsdk:"labels"`
}

type fastModel struct {
	fastEmbedded
	Enabled types.Bool   `tfsdk:"enabled"`
	Inner   types.Object `tfsdk:"inner"`
	Items   types.List   `tfsdk:"items"`
	Skipped string       `tfsdk:"-"`
}

var (
	innerType = types.ObjectType{AttrTypes: map[string]attr.Type{"key": types.StringType, "count": types.Int64Type}}
	fastType  = types.ObjectType{AttrTypes: map[string]attr.Type{
		"name": types.StringType, "labels": types.MapType{ElemType: types.StringType}, "enabled": types.BoolType,
		"inner": innerType, "items": types.ListType{ElemType: innerType},
	}}
)

func sampleModels() map[string]fastModel {
	inner := types.ObjectValueMust(innerType.AttrTypes, map[string]attr.Value{"key": types.StringValue("k"), "count": types.Int64Value(3)})
	return map[string]fastModel{
		"all set": {
			fastEmbedded: fastEmbedded{Name: types.StringValue("a"), Labels: types.MapValueMust(types.StringType, map[string]attr.Value{"x": types.StringValue("y")})},
			Enabled:      types.BoolValue(true),
			Inner:        inner,
			Items:        types.ListValueMust(innerType, []attr.Value{inner, types.ObjectNull(innerType.AttrTypes)}),
		},
		"nulls and unknowns": {
			fastEmbedded: fastEmbedded{Name: types.StringUnknown(), Labels: types.MapNull(types.StringType)},
			Enabled:      types.BoolNull(),
			Inner:        types.ObjectUnknown(innerType.AttrTypes),
			Items:        types.ListValueMust(innerType, []attr.Value{}),
		},
	}
}

func TestObjectFromAndAsMatchTheFramework(t *testing.T) {
	ctx := context.Background()
	for name, m := range sampleModels() {
		t.Run(name, func(t *testing.T) {
			want, d := types.ObjectValueFrom(ctx, fastType.AttrTypes, m)
			if d.HasError() {
				t.Fatal(d)
			}
			if _, ok := fastObject(ctx, fastType, m); !ok {
				t.Fatal("the fast path was not taken")
			}
			got, d := ObjectFrom(ctx, fastType, &m)
			if d.HasError() || !got.Equal(want) {
				t.Fatalf("ObjectFrom = %v, %v; want %v", got, d, want)
			}

			var fast, slow fastModel
			fast.Skipped, slow.Skipped = "kept", "kept"
			if !fastAs(want, &fast) {
				t.Fatal("the fast path was not taken")
			}
			if d := want.As(ctx, &slow, basetypes.ObjectAsOptions{}); d.HasError() {
				t.Fatal(d)
			}
			a, _ := types.ObjectValueFrom(ctx, fastType.AttrTypes, fast)
			b, _ := types.ObjectValueFrom(ctx, fastType.AttrTypes, slow)
			if !a.Equal(b) || fast.Skipped != "kept" {
				t.Fatalf("As read %+v, the framework %+v", fast, slow)
			}
		})
	}
}

// Whatever the fast path does not handle goes the framework's way, with
// the framework's diagnostics.
func TestFallbacksGiveTheFrameworksAnswer(t *testing.T) {
	ctx := context.Background()
	m := sampleModels()["all set"]
	obj, _ := types.ObjectValueFrom(ctx, fastType.AttrTypes, m)

	type missingField struct {
		Name types.String `tfsdk:"name"`
	}
	type goString struct {
		fastEmbedded
		Enabled bool         `tfsdk:"enabled"`
		Inner   types.Object `tfsdk:"inner"`
		Items   types.List   `tfsdk:"items"`
	}
	type untagged struct {
		fastEmbedded
		Enabled types.Bool
		Inner   types.Object `tfsdk:"inner"`
		Items   types.List   `tfsdk:"items"`
	}
	type wrongType struct {
		fastEmbedded
		Enabled types.String `tfsdk:"enabled"`
		Inner   types.Object `tfsdk:"inner"`
		Items   types.List   `tfsdk:"items"`
	}
	cases := map[string]struct {
		o      types.Object
		fast   func() any
		wantOK bool
	}{
		"struct misses an attribute": {obj, func() any { return &missingField{} }, false},
		"a Go bool field":            {obj, func() any { return &goString{} }, true},
		"an untagged field":          {obj, func() any { return &untagged{} }, false},
		"a field of another type":    {obj, func() any { return &wrongType{} }, false},
		"a null object":              {types.ObjectNull(fastType.AttrTypes), func() any { return &fastModel{} }, false},
		"an unknown object":          {types.ObjectUnknown(fastType.AttrTypes), func() any { return &fastModel{} }, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := c.fast(), c.fast()
			got := As(ctx, c.o, a)
			want := c.o.As(ctx, b, basetypes.ObjectAsOptions{})
			if !sameDiags(got, want) {
				t.Fatalf("As: %v\nframework: %v", got, want)
			}
			if got.HasError() == c.wantOK {
				t.Fatalf("error %v, want ok %v", got, c.wantOK)
			}
			if got.HasError() {
				return // the models hold nothing to convert back
			}
			gotObj, gotDiags := ObjectFrom(ctx, fastType, a)
			wantObj, wantDiags := types.ObjectValueFrom(ctx, fastType.AttrTypes, b)
			if !sameDiags(gotDiags, wantDiags) || !gotObj.Equal(wantObj) {
				t.Fatalf("ObjectFrom: %v %v\nframework: %v %v", gotObj, gotDiags, wantObj, wantDiags)
			}
		})
	}
}

func TestGetAndSetStateMatchTheFramework(t *testing.T) {
	ctx := context.Background()
	s := schema.Schema{Attributes: map[string]schema.Attribute{
		"name":    schema.StringAttribute{Required: true},
		"labels":  schema.MapAttribute{ElementType: types.StringType, Optional: true},
		"enabled": schema.BoolAttribute{Optional: true},
		"inner": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{Optional: true}, "count": schema.Int64Attribute{Optional: true},
		}},
		"items": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{Optional: true}, "count": schema.Int64Attribute{Optional: true},
		}}},
	}}
	typ := s.Type().TerraformType(ctx)
	for name, m := range sampleModels() {
		t.Run(name, func(t *testing.T) {
			fast := tfsdk.State{Schema: s, Raw: tftypes.NewValue(typ, nil)}
			slow := fast
			if d := SetState(ctx, &fast, &m); d.HasError() {
				t.Fatal(d)
			}
			if d := slow.Set(ctx, &m); d.HasError() {
				t.Fatal(d)
			}
			if !fast.Raw.Equal(slow.Raw) {
				t.Fatalf("SetState wrote %v, the framework %v", fast.Raw, slow.Raw)
			}
			var a, b fastModel
			if d := GetState(ctx, fast, &a); d.HasError() {
				t.Fatal(d)
			}
			if d := fast.Get(ctx, &b); d.HasError() {
				t.Fatal(d)
			}
			if !fastGet(ctx, s.Type(), fast.Raw, &fastModel{}) {
				t.Fatal("the fast path was not taken")
			}
			x, _ := types.ObjectValueFrom(ctx, fastType.AttrTypes, a)
			y, _ := types.ObjectValueFrom(ctx, fastType.AttrTypes, b)
			if !x.Equal(y) {
				t.Fatalf("GetState read %+v, the framework %+v", a, b)
			}
			for _, get := range []func(any) diag.Diagnostics{
				func(v any) diag.Diagnostics { return GetPlan(ctx, tfsdk.Plan(fast), v) },
				func(v any) diag.Diagnostics { return GetConfig(ctx, tfsdk.Config(fast), v) },
			} {
				var c fastModel
				if d := get(&c); d.HasError() {
					t.Fatal(d)
				}
				z, _ := types.ObjectValueFrom(ctx, fastType.AttrTypes, c)
				if !z.Equal(y) {
					t.Fatalf("read %+v, the framework %+v", c, b)
				}
			}
		})
	}
	// A null state (a resource being created) is the framework's answer.
	null := tfsdk.State{Schema: s, Raw: tftypes.NewValue(typ, nil)}
	var a, b fastModel
	if got, want := GetState(ctx, null, &a), null.Get(ctx, &b); !got.Equal(want) {
		t.Fatalf("GetState of null: %v, framework %v", got, want)
	}
}

// sameDiags compares diagnostics by severity and summary: the framework
// reports the first mismatched field it meets in map order, which varies.
func sameDiags(a, b diag.Diagnostics) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Severity() != b[i].Severity() || a[i].Summary() != b[i].Summary() {
			return false
		}
	}
	return true
}

// SetPlanAttribute writes what SetAttribute writes, and nothing when the
// plan holds the value already.
func TestSetPlanAttribute(t *testing.T) {
	ctx := context.Background()
	s := schema.Schema{Attributes: map[string]schema.Attribute{
		"name":     schema.StringAttribute{Required: true},
		"rendered": schema.StringAttribute{Computed: true},
	}}
	typ := s.Type().TerraformType(ctx)
	plan := tfsdk.Plan{Schema: s, Raw: tftypes.NewValue(typ, map[string]tftypes.Value{
		"name": tftypes.NewValue(tftypes.String, "a"), "rendered": tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
	})}
	for _, v := range []types.String{types.StringValue("{}"), types.StringValue("{}"), types.StringNull(), types.StringUnknown()} {
		want := plan
		if d := want.SetAttribute(ctx, path.Root("rendered"), v); d.HasError() {
			t.Fatal(d)
		}
		if d := SetPlanAttribute(ctx, &plan, path.Root("rendered"), v); d.HasError() {
			t.Fatal(d)
		}
		if !plan.Raw.Equal(want.Raw) {
			t.Fatalf("after setting %v: %v, want %v", v, plan.Raw, want.Raw)
		}
	}
	// A path the schema does not have is the framework's error.
	if d := SetPlanAttribute(ctx, &plan, path.Root("nope"), types.StringValue("x")); !d.HasError() {
		t.Fatal("no error for an unknown attribute")
	}
}

func TestRawAttributeEqual(t *testing.T) {
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String, "b": tftypes.String}}
	obj := func(a, b any) tftypes.Value {
		return tftypes.NewValue(typ, map[string]tftypes.Value{"a": tftypes.NewValue(tftypes.String, a), "b": tftypes.NewValue(tftypes.String, b)})
	}
	cases := []struct {
		x, y tftypes.Value
		want bool
	}{
		{obj("1", "2"), obj("1", "3"), true},
		{obj("1", "2"), obj("9", "2"), false},
		{obj(nil, "2"), obj(nil, "3"), true},
		{obj(tftypes.UnknownValue, "2"), obj(tftypes.UnknownValue, "2"), true},
		{obj("1", "2"), tftypes.NewValue(typ, nil), false},
		{tftypes.NewValue(typ, tftypes.UnknownValue), obj("1", "2"), false},
	}
	for i, c := range cases {
		if got := RawAttributeEqual(c.x, c.y, "a"); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
	if RawAttributeEqual(obj("1", "2"), obj("1", "2"), "missing") {
		t.Error("an attribute the type does not have compares equal")
	}
}
