package tfvalues

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestDataSourceAttributes: the data source form keeps names, types and
// descriptions, makes every attribute computed (nested ones too) and drops
// what only a resource has; an attribute kind without a form panics.
func TestDataSourceAttributes(t *testing.T) {
	in := map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required: true, MarkdownDescription: "Name.",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"mode": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("a"), MarkdownDescription: "Mode."},
		"items": schema.ListNestedAttribute{
			Optional: true, MarkdownDescription: "Items.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"labels": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Labels."},
				"size":   schema.SingleNestedAttribute{Required: true, Attributes: map[string]schema.Attribute{"n": schema.Int64Attribute{Required: true}}},
			}},
		},
	}
	out := DataSourceAttributes(in)
	if got, want := ObjectType(out), ObjectType(in); !got.Equal(want) {
		t.Fatalf("type %s, want %s", got, want)
	}
	name, ok := out["name"].(dsschema.StringAttribute)
	if !ok || !name.Computed || name.Required || name.MarkdownDescription != "Name." || len(name.Validators) != 0 {
		t.Errorf("name: %#v", out["name"])
	}
	if mode := out["mode"].(dsschema.StringAttribute); !mode.Computed || mode.Optional || mode.MarkdownDescription != "Mode." {
		t.Errorf("mode: %#v", mode)
	}
	items := out["items"].(dsschema.ListNestedAttribute)
	size := items.NestedObject.Attributes["size"].(dsschema.SingleNestedAttribute)
	if !items.Computed || !items.NestedObject.Attributes["labels"].IsComputed() || !size.Computed || !size.Attributes["n"].IsComputed() {
		t.Errorf("nested attributes not all computed: %#v", items)
	}

	defer func() {
		if recover() == nil {
			t.Error("a set attribute (no data source form) did not panic")
		}
	}()
	DataSourceAttribute(schema.SetAttribute{Optional: true, ElementType: types.StringType})
}
