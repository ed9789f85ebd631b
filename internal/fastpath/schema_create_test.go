package fastpath

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// inertOnCreate is a provider modifier marked InertOnCreate.
type inertOnCreate struct{ changesPlans }

func (inertOnCreate) InertOnCreate() {}

// syntheticSchema has every shape the create index handles: nested
// attributes (single, list, map, set), single blocks (list and set blocks
// make a type ineligible, see TestEligibleCreate),
// computed, optional+computed, defaults at the top, inside nested objects,
// below a parent with a default of its own and inside blocks.
func syntheticSchema() schema.Schema {
	inner := func() map[string]schema.Attribute {
		return map[string]schema.Attribute{
			"s":        schema.StringAttribute{Optional: true},
			"d":        schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("dflt")},
			"c":        schema.StringAttribute{Computed: true},
			"oc":       schema.StringAttribute{Optional: true, Computed: true},
			"b":        schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true)},
			"n":        schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(7)},
			"tags":     schema.MapAttribute{ElementType: types.StringType, Optional: true},
			"computed": schema.ListAttribute{ElementType: types.StringType, Computed: true},
		}
	}
	objType := map[string]attr.Type{"x": types.StringType, "y": types.StringType}
	return schema.Schema{
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace(), inertOnCreate{}}},
			"mode": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("auto")},
			"size": schema.Int64Attribute{Optional: true, CustomType: tfvalues.WholeNumberType{}},
			"single": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"deep": schema.SingleNestedAttribute{Optional: true, Attributes: inner()},
				"list": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: inner()}},
			}},
			"computed_single": schema.SingleNestedAttribute{Optional: true, Computed: true, Attributes: inner()},
			// A parent with a default of its own, whose children have
			// defaults and computed attributes too.
			"defaulted": schema.SingleNestedAttribute{Optional: true, Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(map[string]attr.Type{"x": types.StringType, "y": types.StringType},
					map[string]attr.Value{"x": types.StringValue("X"), "y": types.StringNull()})),
				Attributes: map[string]schema.Attribute{
					"x": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("own")},
					"y": schema.StringAttribute{Computed: true},
				}},
			"list": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: inner()}},
			"map":  schema.MapNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: inner()}},
			// A set without anything to plan inside is eligible.
			"set": schema.SetNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"x": schema.StringAttribute{Optional: true},
			}}},
			"plain_object": schema.ObjectAttribute{Optional: true, Computed: true, AttributeTypes: objType},
		},
		Blocks: map[string]schema.Block{
			"one": schema.SingleNestedBlock{Attributes: inner(), Blocks: map[string]schema.Block{
				"sub": schema.SingleNestedBlock{Attributes: inner()},
			}},
			"empty": schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}},
		},
	}
}

func TestCreateIndex(t *testing.T) {
	nodes, why := createIndex(context.Background(), syntheticSchema())
	if why != "" {
		t.Fatalf("not eligible: %s", why)
	}
	// Every attribute or block with a default or a computed attribute at
	// or below it, and nothing else.
	var got []string
	var walk func(at string, ns []*cnode)
	walk = func(at string, ns []*cnode) {
		for _, n := range ns {
			p := at + n.name
			desc := p
			if n.def != nil {
				desc += "=" + n.def.String()
			}
			if n.computed {
				desc += " computed"
			}
			if n.whole {
				desc += " whole"
			}
			got = append(got, desc)
			walk(p+".", n.children)
		}
	}
	walk("", nodes)
	sort.Strings(got)
	for _, want := range []string{
		"id computed", "mode=tftypes.String<\"auto\"> computed", "size whole", "single", "single.deep", "single.deep.c computed",
		"single.list", "single.list.d=tftypes.String<\"dflt\"> computed", "computed_single computed", "defaulted.x=tftypes.String<\"own\"> computed",
		"list.n=tftypes.Number<\"7\"> computed", "map.b=tftypes.Bool<\"true\"> computed", "one", "one.sub", "one.sub.computed computed",
		"plain_object computed",
	} {
		found := false
		for _, g := range got {
			if g == want {
				found = true
			}
		}
		if !found {
			t.Errorf("index lacks %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		if strings.HasPrefix(g, "set") || strings.HasPrefix(g, "empty") || strings.HasSuffix(g, ".s") || strings.HasSuffix(g, ".tags") || g == "name" {
			t.Errorf("index has %q, which a create never plans otherwise", g)
		}
	}
}

func TestEligibleCreate(t *testing.T) {
	withAttr := func(name string, a schema.Attribute) schema.Schema {
		s := syntheticSchema()
		s.Attributes[name] = a
		return s
	}
	withBlock := func(name string, b schema.Block) schema.Schema {
		s := syntheticSchema()
		s.Blocks[name] = b
		return s
	}
	for _, tc := range []struct {
		name   string
		schema schema.Schema
		why    string // empty: eligible
	}{
		{"synthetic", syntheticSchema(), ""},
		{"a modifier marked inert when unchanged only", withAttr("z", schema.StringAttribute{Optional: true,
			PlanModifiers: []planmodifier.String{inert{}}}), "z: plan modifier fastpath.inert"},
		{"an unknown modifier", withAttr("z", schema.StringAttribute{Optional: true,
			PlanModifiers: []planmodifier.String{changesPlans{}}}), "z: plan modifier fastpath.changesPlans"},
		{"a computed attribute inside a set", withAttr("z", schema.SetNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{"c": schema.StringAttribute{Computed: true}}}}), "z: computed attribute or default inside a set"},
		{"a custom type", withAttr("z", schema.StringAttribute{Optional: true, CustomType: customString{}}), "z: custom type"},
		{"a write-only attribute", withAttr("z", schema.StringAttribute{Optional: true, WriteOnly: true}), "z: write-only attribute"},
		{"a list block", withBlock("z", schema.ListNestedBlock{}), "z: list or set block"},
		{"a set block", withBlock("z", schema.SetNestedBlock{}), "z: list or set block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, "test", []func() resource.Resource{func() resource.Resource { return fakeResource{tc.schema} }}, nil)
			ok, why := s.EligibleCreate(context.Background(), "test_fake")
			if ok != (tc.why == "") || !strings.HasPrefix(why, tc.why) {
				t.Errorf("eligible = %v (%q), want %v (%q)", ok, why, tc.why == "", tc.why)
			}
		})
	}
}

type customString struct{ basetypes.StringType }

// fakeProvider serves fakeResource.
type fakeProvider struct{ s schema.Schema }

func (fakeProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "test"
}
func (fakeProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (fakeProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}
func (fakeProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
func (p fakeProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return fakeResource(p) }}
}

// syntheticServers are the framework's server and the fast path's, each
// serving one resource type of schema s, test_fake, both configured.
func syntheticServers(t *testing.T, s schema.Schema) (framework tfprotov6.ProviderServer, fast *Server) {
	t.Helper()
	p := fakeProvider{s}
	framework = providerserver.NewProtocol6(p)()
	fast = New(providerserver.NewProtocol6(p)().(FrameworkServer), "test", p.Resources(context.Background()), func() (any, bool) { return nil, true })
	emptyType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}
	empty, _ := tfprotov6.NewDynamicValue(emptyType, tftypes.NewValue(emptyType, map[string]tftypes.Value{}))
	for _, srv := range []tfprotov6.ProviderServer{framework, fast} {
		if _, err := srv.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: &empty}); err != nil {
			t.Fatal(err)
		}
	}
	return framework, fast
}

// objectOf builds a value of the object type t from the attributes given,
// the others null.
func objectOf(t tftypes.Type, attrs map[string]tftypes.Value) tftypes.Value {
	vals := map[string]tftypes.Value{}
	for n, at := range t.(tftypes.Object).AttributeTypes {
		vals[n] = tftypes.NewValue(at, nil)
		if v, ok := attrs[n]; ok {
			vals[n] = v
		}
	}
	return tftypes.NewValue(t, vals)
}

// TestPlanCreateSynthetic plans creates of the synthetic schema through
// the framework and the fast path and requires the same planned state.
func TestPlanCreateSynthetic(t *testing.T) {
	ctx := context.Background()
	framework, fast := syntheticServers(t, syntheticSchema())
	typ := syntheticSchema().Type().TerraformType(ctx).(tftypes.Object)
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	obj := objectOf
	at := func(names ...string) tftypes.Type {
		var cur tftypes.Type = typ
		for _, n := range names {
			switch c := cur.(type) {
			case tftypes.Object:
				cur = c.AttributeTypes[n]
			case tftypes.List:
				cur = c.ElementType.(tftypes.Object).AttributeTypes[n]
			case tftypes.Map:
				cur = c.ElementType.(tftypes.Object).AttributeTypes[n]
			}
		}
		return cur
	}
	elem := func(t tftypes.Type) tftypes.Type {
		switch c := t.(type) {
		case tftypes.List:
			return c.ElementType
		case tftypes.Map:
			return c.ElementType
		case tftypes.Set:
			return c.ElementType
		}
		return nil
	}
	innerT := elem(at("list"))
	inner := func(attrs map[string]tftypes.Value) tftypes.Value { return obj(innerT, attrs) }
	cases := map[string]map[string]tftypes.Value{
		"minimal": {"name": str("a")},
		"top-level values": {"name": str("a"), "mode": str("manual"), "size": tftypes.NewValue(tftypes.Number, 3),
			"plain_object": obj(at("plain_object"), map[string]tftypes.Value{"x": str("x")})},
		"nested single with inner defaults": {"name": str("a"), "single": obj(at("single"), map[string]tftypes.Value{
			"deep": inner(map[string]tftypes.Value{"s": str("s"), "oc": str("set")}),
			"list": tftypes.NewValue(at("single", "list"), []tftypes.Value{inner(nil), inner(map[string]tftypes.Value{"d": str("mine"), "b": tftypes.NewValue(tftypes.Bool, false)})}),
		})},
		"computed nested single configured": {"name": str("a"), "computed_single": inner(map[string]tftypes.Value{"s": str("s")})},
		"defaulted parent configured":       {"name": str("a"), "defaulted": obj(at("defaulted"), map[string]tftypes.Value{"y": str("mine")})},
		"list and map of objects": {"name": str("a"),
			"list": tftypes.NewValue(at("list"), []tftypes.Value{inner(map[string]tftypes.Value{"n": tftypes.NewValue(tftypes.Number, 1)}), inner(nil)}),
			"map":  tftypes.NewValue(at("map"), map[string]tftypes.Value{"k": inner(map[string]tftypes.Value{"tags": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"a": str("b")})})}),
			"set":  tftypes.NewValue(at("set"), []tftypes.Value{obj(elem(at("set")), map[string]tftypes.Value{"x": str("1")}), obj(elem(at("set")), nil)}),
		},
		"blocks": {"name": str("a"),
			"one": obj(at("one"), map[string]tftypes.Value{"s": str("s"), "d": str("mine"),
				"sub": obj(at("one", "sub"), map[string]tftypes.Value{"oc": str("x")})}),
			"empty": obj(at("empty"), nil),
		},
		"empty collections and null single block": {"name": str("a"),
			"list": tftypes.NewValue(at("list"), []tftypes.Value{}), "map": tftypes.NewValue(at("map"), map[string]tftypes.Value{}),
			"set": tftypes.NewValue(at("set"), []tftypes.Value{}),
		},
		"unknowns": {"name": unknown(tftypes.String), "mode": unknown(tftypes.String), "size": unknown(tftypes.Number),
			"single":          obj(at("single"), map[string]tftypes.Value{"deep": unknown(innerT), "list": unknown(at("single", "list"))}),
			"computed_single": unknown(innerT),
			"list":            tftypes.NewValue(at("list"), []tftypes.Value{unknown(innerT), inner(map[string]tftypes.Value{"s": unknown(tftypes.String), "d": unknown(tftypes.String)})}),
			"map":             unknown(at("map")),
			"set":             unknown(at("set")),
			"one":             obj(at("one"), map[string]tftypes.Value{"sub": unknown(at("one", "sub"))}),
		},
	}
	for name, attrs := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := obj(typ, attrs)
			d, err := tfprotov6.NewDynamicValue(typ, cfg)
			if err != nil {
				t.Fatal(err)
			}
			null, _ := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
			req := func() *tfprotov6.PlanResourceChangeRequest {
				return &tfprotov6.PlanResourceChangeRequest{TypeName: "test_fake", PriorState: &null, ProposedNewState: &d, Config: &d}
			}
			want, err := framework.PlanResourceChange(ctx, req())
			if err != nil || len(want.Diagnostics) > 0 {
				t.Fatalf("framework: %v %v", err, want.Diagnostics)
			}
			c0, _ := CreateCounts()
			got, err := fast.PlanResourceChange(ctx, req())
			if err != nil || len(got.Diagnostics) > 0 {
				t.Fatalf("fast path: %v %v", err, got.Diagnostics)
			}
			if c1, _ := CreateCounts(); c1 != c0+1 {
				t.Errorf("not answered by the fast path")
			}
			wv, _ := want.PlannedState.Unmarshal(typ)
			gv, _ := got.PlannedState.Unmarshal(typ)
			if !gv.Equal(wv) {
				diffs, _ := gv.Diff(wv)
				for _, df := range diffs {
					t.Errorf("at %s: got %v, want %v", df.Path, df.Value1, df.Value2)
				}
			}
			if diffs, _ := wv.Diff(cfg); len(diffs) == 0 {
				t.Errorf("control: the framework planned the configuration as it is")
			}
		})
	}
}
