package tfvalues_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

func strMap(kv map[string]string) types.Map {
	vals := map[string]attr.Value{}
	for k, v := range kv {
		vals[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, vals)
}

func TestStringIfSetAndIfKnown(t *testing.T) {
	for _, tc := range []struct {
		name           string
		v              attr.Value
		set            string
		known          string
		setOk, knownOk bool
	}{
		{name: "value", v: types.StringValue("a"), set: "a", setOk: true, known: "a", knownOk: true},
		{name: "empty", v: types.StringValue(""), set: "", setOk: true, known: "", knownOk: true},
		{name: "null", v: types.StringNull(), setOk: false, known: "", knownOk: true},
		{name: "unknown", v: types.StringUnknown(), setOk: false, knownOk: false},
		{name: "not a string", v: types.BoolValue(true), setOk: false, knownOk: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, ok := tfvalues.StringIfSet(tc.v); s != tc.set || ok != tc.setOk {
				t.Errorf("StringIfSet = %q, %v; want %q, %v", s, ok, tc.set, tc.setOk)
			}
			if s, ok := tfvalues.StringIfKnown(tc.v); s != tc.known || ok != tc.knownOk {
				t.Errorf("StringIfKnown = %q, %v; want %q, %v", s, ok, tc.known, tc.knownOk)
			}
		})
	}
}

func TestStringOr(t *testing.T) {
	if got := tfvalues.StringOr("", "Running"); !got.Equal(types.StringValue("Running")) {
		t.Errorf("StringOr(\"\") = %v", got)
	}
	if got := tfvalues.StringOr("Suspended", "Running"); !got.Equal(types.StringValue("Suspended")) {
		t.Errorf("StringOr(Suspended) = %v", got)
	}
}

func TestStringMapAndList(t *testing.T) {
	ctx := context.Background()
	var diags diag.Diagnostics
	if got := tfvalues.StringMap(ctx, types.MapNull(types.StringType), &diags); got != nil {
		t.Errorf("null map = %v, want nil", got)
	}
	if got := tfvalues.StringMap(ctx, types.MapUnknown(types.StringType), &diags); got != nil {
		t.Errorf("unknown map = %v, want nil", got)
	}
	if got := tfvalues.StringMap(ctx, strMap(map[string]string{}), &diags); got == nil || len(got) != 0 {
		t.Errorf("empty map = %#v, want empty and not nil", got)
	}
	if got := tfvalues.StringMap(ctx, strMap(map[string]string{"a": "1"}), &diags); got["a"] != "1" || len(got) != 1 {
		t.Errorf("map = %v", got)
	}
	if got := tfvalues.StringList(ctx, types.ListNull(types.StringType), &diags); got != nil {
		t.Errorf("null list = %v, want nil", got)
	}
	if got := tfvalues.StringList(ctx, types.ListUnknown(types.StringType), &diags); got != nil {
		t.Errorf("unknown list = %v, want nil", got)
	}
	l := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("x"), types.StringValue("y")})
	if got := tfvalues.StringList(ctx, l, &diags); len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Errorf("list = %v", got)
	}
	// A map of the wrong element type is a diagnostic, not a panic.
	tfvalues.StringMap(ctx, types.MapValueMust(types.BoolType, map[string]attr.Value{"a": types.BoolValue(true)}), &diags)
	if !diags.HasError() {
		t.Error("a map of bools read as strings gave no error")
	}
}

// TestMapKeepsTheUsersSpellingOfEmpty: Kubernetes drops empty maps, so an
// empty answer reads back as the user wrote it: {} stays {}, absent stays
// null, and a map emptied out of band becomes null (drift).
func TestMapKeepsTheUsersSpellingOfEmpty(t *testing.T) {
	ctx := context.Background()
	empty := strMap(map[string]string{})
	null := types.MapNull(types.StringType)
	for _, tc := range []struct {
		name  string
		live  map[string]string
		prior types.Map
		want  types.Map
	}{
		{"empty answer, user wrote {}", nil, empty, empty},
		{"empty (not nil) answer, user wrote {}", map[string]string{}, empty, empty},
		{"empty answer, user left it out", nil, null, null},
		{"empty answer, nothing known yet", nil, types.MapUnknown(types.StringType), null},
		{"emptied out of band", nil, strMap(map[string]string{"a": "1"}), null},
		{"values", map[string]string{"a": "1"}, null, strMap(map[string]string{"a": "1"})},
		{"values replace prior", map[string]string{"a": "2"}, strMap(map[string]string{"a": "1"}), strMap(map[string]string{"a": "2"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var diags diag.Diagnostics
			got := tfvalues.Map(ctx, tc.live, tc.prior, &diags)
			if diags.HasError() || !got.Equal(tc.want) {
				t.Errorf("Map = %v (%v), want %v", got, diags, tc.want)
			}
		})
	}
}

func TestStringsTellsNilFromEmpty(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		live []string
		want types.List
	}{
		{"nil is null", nil, types.ListNull(types.StringType)},
		{"empty is an empty list", []string{}, types.ListValueMust(types.StringType, []attr.Value{})},
		{"values in order", []string{"b", "a"}, types.ListValueMust(types.StringType, []attr.Value{types.StringValue("b"), types.StringValue("a")})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var diags diag.Diagnostics
			got := tfvalues.Strings(ctx, tc.live, &diags)
			if diags.HasError() || !got.Equal(tc.want) {
				t.Errorf("Strings(%#v) = %v (%v), want %v", tc.live, got, diags, tc.want)
			}
		})
	}
}

func TestTimeKeepsTheUsersSpellingOfTheSameInstant(t *testing.T) {
	for _, tc := range []struct {
		name  string
		live  string
		prior types.String
		want  types.String
	}{
		{"absent", "", types.StringValue("2030-01-02T15:04:05Z"), types.StringNull()},
		{"no prior", "2030-01-02T15:04:05Z", types.StringNull(), types.StringValue("2030-01-02T15:04:05Z")},
		{"unknown prior", "2030-01-02T15:04:05Z", types.StringUnknown(), types.StringValue("2030-01-02T15:04:05Z")},
		{"offset spelling kept", "2030-01-02T15:04:05Z", types.StringValue("2030-01-02T17:04:05+02:00"), types.StringValue("2030-01-02T17:04:05+02:00")},
		{"fractions kept (the server drops them)", "2030-01-02T15:04:05Z", types.StringValue("2030-01-02T15:04:05.5Z"), types.StringValue("2030-01-02T15:04:05.5Z")},
		{"another instant is drift", "2030-01-02T15:04:06Z", types.StringValue("2030-01-02T15:04:05Z"), types.StringValue("2030-01-02T15:04:06Z")},
		{"unparsable prior", "2030-01-02T15:04:05Z", types.StringValue("tomorrow"), types.StringValue("2030-01-02T15:04:05Z")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tfvalues.Time(tc.live, tc.prior); !got.Equal(tc.want) {
				t.Errorf("Time = %v, want %v", got, tc.want)
			}
		})
	}
}

type pair struct {
	Name  types.String `tfsdk:"name"`
	Count types.Int64  `tfsdk:"count"`
}

var pairType = types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "count": types.Int64Type}}

func TestObjectRoundTrip(t *testing.T) {
	ctx := context.Background()
	var diags diag.Diagnostics
	in := pair{Name: types.StringValue("a"), Count: types.Int64Value(2)}
	o := tfvalues.Object(ctx, pairType, in, &diags)
	var out pair
	if !tfvalues.ObjectAs(ctx, o, &out, &diags) || diags.HasError() || out != in {
		t.Fatalf("round trip = %+v (%v), want %+v", out, diags, in)
	}
	o2 := tfvalues.ObjectOf(pairType, map[string]attr.Value{"name": types.StringValue("a"), "count": types.Int64Value(2)}, &diags)
	if !o2.Equal(o) {
		t.Errorf("ObjectOf = %v, want %v", o2, o)
	}
	if tfvalues.ObjectAs(ctx, types.ObjectNull(pairType.AttrTypes), &out, &diags) ||
		tfvalues.ObjectAs(ctx, types.ObjectUnknown(pairType.AttrTypes), &out, &diags) {
		t.Error("ObjectAs read a null or unknown object")
	}
	// A model that does not fit the type is a diagnostic.
	tfvalues.Object(ctx, pairType, struct {
		Name types.String `tfsdk:"name"`
	}{}, &diags)
	if !diags.HasError() {
		t.Error("a model missing an attribute gave no error")
	}
	// Once diags holds an error, ObjectAs reports false.
	if tfvalues.ObjectAs(ctx, o, &out, &diags) {
		t.Error("ObjectAs reported true with an error in diags")
	}
}

func TestNonNil(t *testing.T) {
	if s := tfvalues.NonNilSlice[string](nil); s == nil || len(s) != 0 {
		t.Errorf("NonNilSlice(nil) = %#v", s)
	}
	if s := tfvalues.NonNilSlice([]string{"a"}); len(s) != 1 {
		t.Errorf("NonNilSlice = %v", s)
	}
	if m := tfvalues.NonNilMap[string, string](nil); m == nil || len(m) != 0 {
		t.Errorf("NonNilMap(nil) = %#v", m)
	}
	if m := tfvalues.NonNilMap(map[string]string{"a": "b"}); m["a"] != "b" {
		t.Errorf("NonNilMap = %v", m)
	}
}

func TestEqualOrBothEmpty(t *testing.T) {
	emptyList := types.ListValueMust(types.StringType, []attr.Value{})
	a := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("a")})
	for _, tc := range []struct {
		name string
		a, b attr.Value
		want bool
	}{
		{"null and empty list", types.ListNull(types.StringType), emptyList, true},
		{"null and empty map", types.MapNull(types.StringType), strMap(map[string]string{}), true},
		{"empty set and null", types.SetValueMust(types.StringType, nil), types.SetNull(types.StringType), true},
		{"same values", a, types.ListValueMust(types.StringType, []attr.Value{types.StringValue("a")}), true},
		{"values and empty", a, emptyList, false},
		{"unknown and empty", types.ListUnknown(types.StringType), emptyList, false},
		{"different maps", strMap(map[string]string{"a": "1"}), strMap(map[string]string{"a": "2"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tfvalues.EqualOrBothEmpty(tc.a, tc.b); got != tc.want {
				t.Errorf("EqualOrBothEmpty = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTypesDerivedFromTheSchema(t *testing.T) {
	attrs := map[string]schema.Attribute{
		"name":   schema.StringAttribute{Required: true},
		"labels": schema.MapAttribute{ElementType: types.StringType, Optional: true},
		"ports": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"port": schema.Int64Attribute{Required: true},
		}}},
		"meta": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"uid": schema.StringAttribute{Computed: true},
		}},
		"zones": schema.SetNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"zone": schema.StringAttribute{Required: true},
		}}},
	}
	portType := types.ObjectType{AttrTypes: map[string]attr.Type{"port": types.Int64Type}}
	metaType := types.ObjectType{AttrTypes: map[string]attr.Type{"uid": types.StringType}}
	zoneType := types.ObjectType{AttrTypes: map[string]attr.Type{"zone": types.StringType}}
	want := types.ObjectType{AttrTypes: map[string]attr.Type{
		"name":   types.StringType,
		"labels": types.MapType{ElemType: types.StringType},
		"ports":  types.ListType{ElemType: portType},
		"meta":   metaType,
		"zones":  types.SetType{ElemType: zoneType},
	}}
	if got := tfvalues.ObjectType(attrs); !got.Equal(want) {
		t.Errorf("ObjectType = %s, want %s", got, want)
	}
	for name, want := range map[string]types.ObjectType{"ports": portType, "meta": metaType, "zones": zoneType} {
		if got := tfvalues.ElementType(attrs[name]); !got.Equal(want) {
			t.Errorf("ElementType(%s) = %s, want %s", name, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ElementType of a string attribute did not panic")
		}
	}()
	tfvalues.ElementType(attrs["name"])
}

func TestCheckModel(t *testing.T) {
	ctx := context.Background()
	if err := tfvalues.CheckModel(ctx, pairType, &pair{}); err != nil {
		t.Errorf("a fitting model: %v", err)
	}
	type missing struct {
		Name types.String `tfsdk:"name"`
	}
	if err := tfvalues.CheckModel(ctx, pairType, &missing{}); err == nil {
		t.Error("a model without count passed")
	}
	type extra struct {
		Name  types.String `tfsdk:"name"`
		Count types.Int64  `tfsdk:"count"`
		More  types.Bool   `tfsdk:"more"`
	}
	if err := tfvalues.CheckModel(ctx, pairType, &extra{}); err == nil {
		t.Error("a model with an attribute the type lacks passed")
	}
	type wrongKind struct {
		Name  types.String `tfsdk:"name"`
		Count types.String `tfsdk:"count"`
	}
	if err := tfvalues.CheckModel(ctx, pairType, &wrongKind{}); err == nil {
		t.Error("a model with a string count passed")
	}
}
