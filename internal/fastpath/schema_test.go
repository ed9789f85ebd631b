package fastpath

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// fakeResource has the schema a case gives it.
type fakeResource struct{ s schema.Schema }

func (f fakeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fake"
}
func (f fakeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = f.s
}
func (fakeResource) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}
func (fakeResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse)       {}
func (fakeResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}
func (fakeResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// changesPlans is a plan modifier the fast path knows nothing about.
type changesPlans struct{}

func (changesPlans) Description(context.Context) string         { return "" }
func (changesPlans) MarkdownDescription(context.Context) string { return "" }
func (changesPlans) PlanModifyString(context.Context, planmodifier.StringRequest, *planmodifier.StringResponse) {
}

type inert struct{ changesPlans }

func (inert) InertWhenUnchanged() {}

// TestEligible: a resource type qualifies only when everything the
// framework's plan would run on an unchanged value is known to do nothing.
func TestEligible(t *testing.T) {
	str := func(a schema.StringAttribute) schema.Schema {
		a.Optional = true
		return schema.Schema{Attributes: map[string]schema.Attribute{
			"nested": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{
				Attributes: map[string]schema.Attribute{"a": a},
			}},
		}}
	}
	for _, tc := range []struct {
		name   string
		schema schema.Schema
		why    string // empty: eligible
	}{
		{"framework modifiers", str(schema.StringAttribute{PlanModifiers: []planmodifier.String{
			stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}}), ""},
		{"a modifier marked inert", str(schema.StringAttribute{PlanModifiers: []planmodifier.String{inert{}}}), ""},
		{"a constant default", str(schema.StringAttribute{Computed: true, Default: stringdefault.StaticString("x")}), ""},
		{"an unknown modifier", str(schema.StringAttribute{PlanModifiers: []planmodifier.String{changesPlans{}}}),
			"nested.a: plan modifier fastpath.changesPlans"},
		{"a write-only attribute", str(schema.StringAttribute{WriteOnly: true}), "nested.a: write-only attribute"},
		{"a default of an unhandled kind", schema.Schema{Attributes: map[string]schema.Attribute{
			"f": schema.Float64Attribute{Optional: true, Computed: true, Default: float64default.StaticFloat64(1)},
		}}, "f: default of kind"},
		{"a default inside a set", schema.Schema{Attributes: map[string]schema.Attribute{
			"s": schema.SetNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{
				Attributes: map[string]schema.Attribute{"a": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("x")}},
			}},
		}}, "s: default inside a set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, "test", []func() resource.Resource{func() resource.Resource { return fakeResource{tc.schema} }}, nil)
			ok, why := s.Eligible(context.Background(), "test_fake")
			if ok != (tc.why == "") || !strings.HasPrefix(why, tc.why) {
				t.Errorf("eligible = %v (%q), want %v (%q)", ok, why, tc.why == "", tc.why)
			}
		})
	}
}
