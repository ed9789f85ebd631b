package protocoltest

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// toyProvider serves one resource, toy_thing: a top-level validated
// attribute (not a nested check) and a list of nested items with one
// validated attribute and a validator on the list itself.
type toyProvider struct{}

func (toyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "toy"
}
func (toyProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (toyProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}
func (toyProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return toyThing{} }}
}
func (toyProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type toyThing struct{ resource.Resource }

func (toyThing) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_thing"
}

func (toyThing) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
		"items": schema.ListNestedAttribute{
			Optional:   true,
			Validators: []validator.List{listvalidator.SizeAtMost(3)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"key": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(2)}},
				"raw": schema.StringAttribute{Optional: true},
			}},
		},
	}}
}

// TestCoverageCheck: Check names every nested check no observed
// diagnostic reached, counts one reached only at its own path (or inside
// it) and of its own resource, and refuses exemptions that name no test
// or no check.
func TestCoverageCheck(t *testing.T) {
	c := Coverage{Provider: func() provider.Provider { return toyProvider{} }, Resources: []string{"toy_thing"}, Sources: []string{"testdata/custom"}}
	at := func(typ, path, summary string) observation {
		return observation{kind: "resource", typ: typ, path: path, summary: summary, severity: tfprotov6.DiagnosticSeverityError, located: path != ""}
	}
	all := []observation{
		at("toy_thing", "items[*].key", "Invalid Attribute Value Length"),
		at("toy_thing", "items", "Invalid List Length"),
		at("toy_thing", "items", "Toy items refused"),
		at("toy_thing", "items", "Toy wrapped warning"),
	}
	wantMissing := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("nothing missing; want %q", want)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("the report does not name %q:\n%s", w, err)
			}
		}
	}

	if err := c.check(all); err != nil {
		t.Fatalf("every check reached, yet: %v", err)
	}
	// The top-level name and the unvalidated raw are not checks; a
	// diagnostic without a path is not a custom check.
	t.Run("each check alone missing", func(t *testing.T) {
		for i, name := range map[int]string{0: "items[*].key (String validators)", 2: `"Toy items refused" (checks.go:11)`, 3: `"Toy wrapped warning" (checks.go:19)`} {
			rest := append(append([]observation(nil), all[:i]...), all[i+1:]...)
			wantMissing(t, c.check(rest), name)
		}
	})
	t.Run("a validator of a nested attribute", func(t *testing.T) {
		// Reached by a diagnostic inside it (an object validator reports
		// at the member it judges)...
		if err := c.check([]observation{all[0], all[2], all[3]}); err != nil {
			t.Errorf("reached from inside, yet: %v", err)
		}
		// ...but not by a custom check's diagnostic at its path.
		wantMissing(t, c.check(all[2:]), "items (List validators)", "items[*].key")
	})
	t.Run("another resource's diagnostic does not count", func(t *testing.T) {
		obs := append([]observation(nil), all[1:]...)
		wantMissing(t, c.check(append(obs, at("toy_other", "items[*].key", "Invalid Attribute Value Length"))), "items[*].key")
	})
	t.Run("a sibling path does not count", func(t *testing.T) {
		obs := append([]observation(nil), all[1:]...)
		wantMissing(t, c.check(append(obs, at("toy_thing", "items[*].keys", "x"))), "items[*].key")
	})
	t.Run("a custom summary without a path does not count", func(t *testing.T) {
		obs := append([]observation(nil), all[:2]...)
		obs = append(obs, at("toy_thing", "", "Toy items refused"), all[3])
		wantMissing(t, c.check(obs), "Toy items refused")
	})
	t.Run("exemption", func(t *testing.T) {
		ex := c
		ex.Exempt = map[string]string{"Toy wrapped warning": "TestCoverageCheck: made after a download"}
		if err := ex.check(all[:3]); err != nil {
			t.Errorf("exempted, yet: %v", err)
		}
		ex.Exempt = map[string]string{"Toy wrapped warning": "TestNoSuchTest: made after a download"}
		wantMissing(t, ex.check(all[:3]), `"TestNoSuchTest" is none`)
		ex.Exempt = map[string]string{"Toy gone": "TestCoverageCheck: a check that was removed"}
		wantMissing(t, ex.check(all), "wrong exemptions", "Toy gone")
	})
	t.Run("delegated to the shared schema's package", func(t *testing.T) {
		var s resource.SchemaResponse
		toyThing{}.Schema(context.Background(), resource.SchemaRequest{}, &s)
		d := c
		d.Delegated = []Delegation{{Attributes: map[string]any{"items": s.Schema.Attributes["items"]}, By: "toy/shared"}}
		if err := d.check(all[2:]); err != nil {
			t.Errorf("delegated, yet: %v", err)
		}
		// A resource that tightened the shared attribute keeps its own check.
		d.Delegated = []Delegation{{Attributes: map[string]any{"items": schema.ListNestedAttribute{
			Optional: true, Validators: []validator.List{listvalidator.SizeAtMost(3)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"key": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			}},
		}}, By: "toy/shared"}}
		wantMissing(t, d.check(all[1:]), "items[*].key")
	})
}
