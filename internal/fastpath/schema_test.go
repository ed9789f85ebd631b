package fastpath

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
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

// countedResource is a fakeResource of its own type name that counts the
// calls of its Schema.
type countedResource struct {
	fakeResource
	name    string
	schemas *atomic.Int32
}

func (c countedResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + c.name
}

func (c countedResource) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	c.schemas.Add(1)
	c.fakeResource.Schema(ctx, req, resp)
}

// TestTypeInfo_builtPerTypeOnFirstUse: a process builds the index of a
// type when a call of that type first needs it, once, and never the
// indexes of types it is not asked about (lazyTypeInfo).
func TestTypeInfo_builtPerTypeOnFirstUse(t *testing.T) {
	var a, b atomic.Int32
	sch := schema.Schema{Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}
	s := New(nil, "test", []func() resource.Resource{
		func() resource.Resource { return countedResource{fakeResource{sch}, "a", &a} },
		func() resource.Resource { return countedResource{fakeResource{sch}, "b", &b} },
	}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if ok, why := s.Eligible(ctx, "test_a"); !ok {
				t.Errorf("test_a not eligible: %s", why)
			}
		})
	}
	wg.Wait()
	if a.Load() != 1 || b.Load() != 0 {
		t.Fatalf("schemas built: test_a %d, test_b %d; want 1 and 0", a.Load(), b.Load())
	}
	if ok, _ := s.Eligible(ctx, "test_b"); !ok || b.Load() != 1 {
		t.Fatalf("test_b: eligible %v after %d schema calls; want true after 1", ok, b.Load())
	}
	if ok, why := s.Eligible(ctx, "test_c"); ok || why != "unknown resource type" {
		t.Fatalf("test_c: %v %q; want an unknown resource type", ok, why)
	}
}
