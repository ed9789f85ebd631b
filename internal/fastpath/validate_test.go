package fastpath_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// A synthetic resource whose schema holds every construct the validation
// fast path mirrors, most of which no resource of the provider has
// (deprecation messages, validators of objects, maps and sets, read-only
// and required attributes inside nested objects and blocks, a block with
// validators, duplicate diagnostics): the fast path's answer is compared
// with the framework's for configurations that make each of them speak.

type fnString struct {
	f func(validator.StringRequest, *validator.StringResponse)
}

func (fnString) Description(context.Context) string         { return "test" }
func (fnString) MarkdownDescription(context.Context) string { return "test" }
func (v fnString) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	v.f(req, resp)
}

type fnObject struct {
	f func(validator.ObjectRequest, *validator.ObjectResponse)
}

func (fnObject) Description(context.Context) string         { return "test" }
func (fnObject) MarkdownDescription(context.Context) string { return "test" }
func (v fnObject) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	v.f(req, resp)
}

type fnBool struct{}

func (fnBool) Description(context.Context) string         { return "test" }
func (fnBool) MarkdownDescription(context.Context) string { return "test" }
func (fnBool) ValidateBool(_ context.Context, req validator.BoolRequest, resp *validator.BoolResponse) {
	if req.ConfigValue.ValueBool() {
		resp.Diagnostics.AddAttributeWarning(req.Path, "Flag set", "at "+req.PathExpression.String())
	}
}

// objectSays reports the object's null/unknown state and its path, so that
// every call of an object validator shows in the diagnostics.
func objectSays(what string) validator.Object {
	return fnObject{func(req validator.ObjectRequest, resp *validator.ObjectResponse) {
		state := "known"
		switch {
		case req.ConfigValue.IsNull():
			state = "null"
		case req.ConfigValue.IsUnknown():
			state = "unknown"
		}
		resp.Diagnostics.AddAttributeWarning(req.Path, what+" object validator", fmt.Sprintf("%s %s, %d attributes", state, req.PathExpression, len(req.ConfigValue.Attributes())))
	}}
}

// nullSays reports a string validator's call on a null or unknown value.
func nullSays() validator.String {
	return fnString{func(req validator.StringRequest, resp *validator.StringResponse) {
		if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
			resp.Diagnostics.AddAttributeWarning(req.Path, "String validator on a null or unknown value", req.ConfigValue.String())
		}
		var other types.String
		// Validators read the rest of the configuration.
		resp.Diagnostics.Append(req.Config.GetAttribute(context.Background(), path.Root("name"), &other)...)
		if other.ValueString() == "peek" {
			resp.Diagnostics.AddAttributeError(req.Path, "Peeked", "the name is peek")
		}
	}}
}

type synthetic struct{}

func (synthetic) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "synthetic_thing"
}

func (synthetic) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		DeprecationMessage: "synthetic_thing is deprecated",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true, Validators: []validator.String{
				stringvalidator.LengthAtLeast(3), stringvalidator.LengthAtLeast(3), // the same error twice: one
			}},
			"id":     schema.StringAttribute{Computed: true},
			"old":    schema.StringAttribute{Optional: true, DeprecationMessage: "use name"},
			"amount": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)}},
			"whole":  schema.Int64Attribute{Optional: true, CustomType: tfvalues.WholeNumberType{}},
			"flag":   schema.BoolAttribute{Optional: true, Validators: []validator.Bool{fnBool{}}},
			"tags":   schema.MapAttribute{Optional: true, ElementType: types.StringType, Validators: []validator.Map{mapvalidator.SizeAtMost(2)}},
			"items": schema.ListAttribute{Optional: true, ElementType: types.StringType, Validators: []validator.List{
				listvalidator.SizeAtMost(2), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(2)),
			}},
			"set": schema.SetAttribute{Optional: true, ElementType: types.StringType, Validators: []validator.Set{setvalidator.SizeAtMost(2)}},
			"single": schema.SingleNestedAttribute{
				Optional: true, DeprecationMessage: "single is deprecated",
				Validators: []validator.Object{objectSays("single")},
				Attributes: map[string]schema.Attribute{
					"req": schema.StringAttribute{Required: true},
					"ro":  schema.StringAttribute{Computed: true},
					"dep": schema.StringAttribute{Optional: true, DeprecationMessage: "dep is deprecated"},
					"inner": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
						"x": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.OneOf("a", "b"), nullSays()}},
					}},
				},
			},
			"list": schema.ListNestedAttribute{
				Optional:   true,
				Validators: []validator.List{listvalidator.SizeAtMost(2)},
				NestedObject: schema.NestedAttributeObject{
					Validators: []validator.Object{objectSays("list element")},
					Attributes: map[string]schema.Attribute{
						"k": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.OneOf("a", "b"), nullSays()}},
						"v": schema.Int64Attribute{Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)}},
					},
				},
			},
			"map": schema.MapNestedAttribute{
				Optional: true,
				NestedObject: schema.NestedAttributeObject{
					Validators: []validator.Object{objectSays("map element")},
					Attributes: map[string]schema.Attribute{
						"a":  schema.StringAttribute{Required: true},
						"ro": schema.StringAttribute{Computed: true},
					},
				},
			},
			"plain": schema.SingleNestedAttribute{Optional: true, Computed: true, Attributes: map[string]schema.Attribute{
				"p": schema.StringAttribute{Optional: true},
			}},
		},
		Blocks: map[string]schema.Block{
			"blk": schema.SingleNestedBlock{
				DeprecationMessage: "blk is deprecated",
				Validators:         []validator.Object{objectSays("blk")},
				Attributes: map[string]schema.Attribute{
					"must": schema.StringAttribute{Required: true},
					"opt":  schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.LengthAtMost(3), nullSays()}},
				},
				Blocks: map[string]schema.Block{
					"deep": schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{
						"d": schema.StringAttribute{Required: true},
					}},
				},
			},
			"failing": schema.SingleNestedBlock{
				// An error from the block's validators stops its walk.
				Validators: []validator.Object{fnObject{func(req validator.ObjectRequest, resp *validator.ObjectResponse) {
					if !req.ConfigValue.IsNull() {
						resp.Diagnostics.AddAttributeError(req.Path, "Failing block", "set")
					}
				}}},
				DeprecationMessage: "failing is deprecated",
				Attributes: map[string]schema.Attribute{
					"f": schema.StringAttribute{Required: true},
				},
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true}),
		},
	}
}

func (synthetic) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		resp.Diagnostics.AddWarning("Unconfigured", "no provider data")
	}
}

func (synthetic) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.Conflicting(path.MatchRoot("old"), path.MatchRoot("amount"))}
}

func (synthetic) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if name.ValueString() == "warn" {
		resp.Diagnostics.AddAttributeWarning(path.Root("name"), "Warned", "by ValidateConfig")
	}
}

func (synthetic) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}
func (synthetic) Read(context.Context, resource.ReadRequest, *resource.ReadResponse)       {}
func (synthetic) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}
func (synthetic) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

type syntheticProvider struct{}

func (syntheticProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "synthetic"
}
func (syntheticProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (syntheticProvider) Configure(_ context.Context, _ provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	resp.ResourceData = "configured"
}
func (syntheticProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
func (syntheticProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return synthetic{} }}
}

func TestValidate_syntheticSchema(t *testing.T) {
	ctx := context.Background()
	for _, configured := range []bool{false, true} {
		t.Run(fmt.Sprintf("configured=%v", configured), func(t *testing.T) {
			framework := providerserver.NewProtocol6(syntheticProvider{})()
			fw, ok := providerserver.NewProtocol6(syntheticProvider{})().(fastpath.FrameworkServer)
			if !ok {
				t.Fatal("the framework's server lacks a service")
			}
			var data any
			fast := fastpath.New(fw, "synthetic", syntheticProvider{}.Resources(ctx), func() (any, bool) { return data, data != nil })
			if ok, why := fast.EligibleValidate(ctx, "synthetic_thing"); !ok {
				t.Fatalf("not eligible: %s", why)
			}
			if configured {
				empty := tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}, map[string]tftypes.Value{})
				edv, err := tfprotov6.NewDynamicValue(empty.Type(), empty)
				if err != nil {
					t.Fatal(err)
				}
				for _, srv := range []tfprotov6.ProviderServer{framework, fast} {
					if _, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &edv}); err != nil {
						t.Fatal(err)
					}
				}
				data = "configured"
			}
			schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
			if err != nil {
				t.Fatal(err)
			}
			typ := schemas.ResourceSchemas["synthetic_thing"].ValueType()
			for _, c := range syntheticCases() {
				t.Run(c.name, func(t *testing.T) {
					dvv, err := tfprotov6.NewDynamicValue(typ, pt.Value(typ, c.cfg))
					if err != nil {
						t.Fatal(err)
					}
					req := func() *tfprotov6.ValidateResourceConfigRequest {
						return &tfprotov6.ValidateResourceConfigRequest{TypeName: "synthetic_thing", Config: &dvv}
					}
					want, err := framework.ValidateResourceConfig(ctx, req())
					if err != nil {
						t.Fatal(err)
					}
					got, answered := fast.ValidateFast(ctx, req())
					if answered == c.delegate {
						t.Fatalf("answered by the fast path: %v, want %v (framework: %s)", answered, !c.delegate, pt.Describe(want.Diagnostics))
					}
					if !answered {
						return
					}
					if d := pt.DiffDiagnostics(got.Diagnostics, want.Diagnostics); d != "" {
						t.Errorf("diagnostics differ:\n%s", d)
					}
					for _, m := range c.mentions {
						found := false
						for _, d := range want.Diagnostics {
							if pt.AttributePath(d.Attribute)+": "+d.Summary == m {
								found = true
							}
						}
						if !found {
							t.Errorf("control: the framework's answer lacks %q:\n  %s", m, pt.Describe(want.Diagnostics))
						}
					}
				})
			}
		})
	}
}

type syntheticCase struct {
	name     string
	cfg      map[string]any
	mentions []string // "path: summary" the framework's answer must hold (a control)
	delegate bool
}

func syntheticCases() []syntheticCase {
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"name": "thing"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	return []syntheticCase{
		{name: "minimal", cfg: base(nil), mentions: []string{": Deprecated", "blk.must: Missing Configuration for Required Attribute",
			"blk: blk object validator", "blk.opt: String validator on a null or unknown value"}},
		{name: "short name, twice the same error", cfg: base(map[string]any{"name": "ab"}), mentions: []string{"name: Invalid Attribute Value Length"}},
		{name: "name unknown", cfg: base(map[string]any{"name": pt.Unknown})},
		{name: "name null", cfg: base(map[string]any{"name": nil}), mentions: []string{"name: Missing Configuration for Required Attribute"}},
		{name: "name warns, peek", cfg: base(map[string]any{"name": "warn"}), mentions: []string{"name: Warned"}},
		{name: "validators read the configuration", cfg: base(map[string]any{"name": "peek", "blk": map[string]any{"must": "m", "opt": "abc"}}),
			mentions: []string{"blk.opt: Peeked"}},
		{name: "read-only set", cfg: base(map[string]any{"id": "x"}), mentions: []string{"id: Invalid Configuration for Read-Only Attribute"}},
		{name: "read-only unknown", cfg: base(map[string]any{"id": pt.Unknown}), mentions: []string{"id: Invalid Configuration for Read-Only Attribute"}},
		{name: "deprecated set", cfg: base(map[string]any{"old": "x"}), mentions: []string{"old: Attribute Deprecated"}},
		{name: "deprecated unknown", cfg: base(map[string]any{"old": pt.Unknown})},
		{name: "config validator", cfg: base(map[string]any{"old": "x", "amount": 2})},
		{name: "values break validators", cfg: base(map[string]any{"amount": 0, "flag": true, "tags": map[string]any{"a": "1", "b": "2", "c": "3"},
			"items": []any{"a", "bb", "c"}, "set": []any{"a", "b", "c"}}),
			mentions: []string{"amount: Invalid Attribute Value", "flag: Flag set", "tags: Invalid Attribute Value", "items: Invalid Attribute Value"}},
		{name: "whole number", cfg: base(map[string]any{"whole": 3})},
		{name: "fraction", cfg: base(map[string]any{"whole": 1.5}), delegate: true},
		{name: "fraction in a list element", cfg: base(map[string]any{"list": []any{map[string]any{"k": "a", "v": 0.5}}}), delegate: true},
		{name: "huge number", cfg: base(map[string]any{"amount": int64(1) << 60}), delegate: true},
		{name: "single set", cfg: base(map[string]any{"single": map[string]any{"req": "r", "ro": "x", "dep": "d", "inner": map[string]any{"x": "c"}}}),
			mentions: []string{"single: single object validator", "single: Attribute Deprecated", "single.ro: Invalid Configuration for Read-Only Attribute",
				"single.dep: Attribute Deprecated", "single.inner.x: Invalid Attribute Value Match"}},
		{name: "single without its required attribute", cfg: base(map[string]any{"single": map[string]any{}}),
			mentions: []string{"single.req: Missing Configuration for Required Attribute"}},
		{name: "single unknown", cfg: base(map[string]any{"single": pt.Unknown}), mentions: []string{"single: single object validator"}},
		{name: "single with unknown inner", cfg: base(map[string]any{"single": map[string]any{"req": "r", "inner": pt.Unknown, "dep": pt.Unknown}})},
		{name: "list", cfg: base(map[string]any{"list": []any{map[string]any{"k": "a", "v": 1}, map[string]any{"k": "z", "v": -1}}}),
			mentions: []string{"list[0]: list element object validator", "list[1].k: Invalid Attribute Value Match", "list[1].v: Invalid Attribute Value"}},
		{name: "list too long: elements not walked", cfg: base(map[string]any{"list": []any{map[string]any{"k": "z"}, map[string]any{"k": "a"}, map[string]any{"k": "a"}}}),
			mentions: []string{"list: Invalid Attribute Value"}},
		{name: "list with null and unknown elements", cfg: base(map[string]any{"list": []any{nil, pt.Unknown}}),
			mentions: []string{"list[0].k: Missing Configuration for Required Attribute", "list[1].k: Missing Configuration for Required Attribute"}},
		{name: "list with an unknown k", cfg: base(map[string]any{"list": []any{map[string]any{"k": pt.Unknown}}}),
			mentions: []string{"list[0].k: String validator on a null or unknown value"}},
		{name: "list unknown", cfg: base(map[string]any{"list": pt.Unknown})},
		{name: "list empty", cfg: base(map[string]any{"list": []any{}})},
		{name: "map", cfg: base(map[string]any{"map": map[string]any{"x": map[string]any{"a": "1"}, "y": map[string]any{"ro": "r"}, "z": nil}}),
			mentions: []string{`map["x"]: map element object validator`, `map["y"].a: Missing Configuration for Required Attribute`,
				`map["y"].ro: Invalid Configuration for Read-Only Attribute`, `map["z"].a: Missing Configuration for Required Attribute`}},
		{name: "plain computed object set", cfg: base(map[string]any{"plain": map[string]any{"p": "x"}})},
		{name: "block set", cfg: base(map[string]any{"blk": map[string]any{"must": "m", "opt": "long", "deep": map[string]any{"d": "d"}}}),
			mentions: []string{"blk: Block Deprecated", "blk.opt: Invalid Attribute Value Length"}},
		{name: "block set, deep null", cfg: base(map[string]any{"blk": map[string]any{"must": "m"}}),
			mentions: []string{"blk.deep.d: Missing Configuration for Required Attribute"}},
		{name: "block unknown", cfg: base(map[string]any{"blk": pt.Unknown}), mentions: []string{"blk.must: Missing Configuration for Required Attribute"}},
		{name: "failing block", cfg: base(map[string]any{"failing": map[string]any{}}), mentions: []string{"failing: Failing block"}},
		{name: "timeouts", cfg: base(map[string]any{"timeouts": map[string]any{"create": "soon"}}), mentions: []string{"timeouts.create: Invalid Attribute Value Time Duration"}},
		{name: "timeouts ok", cfg: base(map[string]any{"timeouts": map[string]any{"create": "10m"}})},
	}
}
