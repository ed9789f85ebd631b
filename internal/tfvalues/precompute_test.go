package tfvalues_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// customObject stands for a CustomType a schema sets itself.
type customObject struct{ basetypes.ObjectType }

func (c customObject) Equal(o attr.Type) bool {
	x, ok := o.(customObject)
	return ok && c.ObjectType.Equal(x.ObjectType)
}

func nested() schema.Schema {
	leaf := map[string]schema.Attribute{
		"name":  schema.StringAttribute{Required: true},
		"ports": schema.ListAttribute{ElementType: types.Int64Type, Optional: true},
	}
	return schema.Schema{
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true},
			"pod": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
				"containers": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"env":   schema.SetNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: leaf}},
					"mount": schema.MapNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: leaf}},
				}}},
				"custom": schema.SingleNestedAttribute{Optional: true, Attributes: leaf,
					CustomType: customObject{basetypes.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "ports": types.ListType{ElemType: types.Int64Type}}}}},
			}},
		},
		Blocks: map[string]schema.Block{
			"timeouts": schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{"create": schema.StringAttribute{Optional: true}}},
			"rules": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
				Attributes: leaf,
				Blocks:     map[string]schema.Block{"inner": schema.SetNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: leaf}}},
			}},
		},
	}
}

func TestPrecomputeTypesKeepsEveryType(t *testing.T) {
	ctx := context.Background()
	before := nested()
	after := tfvalues.PrecomputeTypes(before)

	if !before.Type().Equal(after.Type()) {
		t.Fatalf("schema type changed:\nbefore %s\nafter  %s", before.Type(), after.Type())
	}
	if !before.Type().TerraformType(ctx).Equal(after.Type().TerraformType(ctx)) {
		t.Fatal("Terraform type changed")
	}
	for name, a := range before.Attributes {
		if !a.GetType().Equal(after.Attributes[name].GetType()) {
			t.Errorf("attribute %s: type %s, was %s", name, after.Attributes[name].GetType(), a.GetType())
		}
	}
}

func TestPrecomputeTypesPrecomputesNestedTypes(t *testing.T) {
	after := tfvalues.PrecomputeTypes(nested())
	pod := after.Attributes["pod"].(schema.SingleNestedAttribute)
	if pod.CustomType == nil {
		t.Fatal("pod: no precomputed type")
	}
	containers := pod.Attributes["containers"].(schema.ListNestedAttribute)
	if containers.CustomType == nil || containers.NestedObject.CustomType == nil {
		t.Fatal("containers: no precomputed type")
	}
	env := containers.NestedObject.Attributes["env"].(schema.SetNestedAttribute)
	mount := containers.NestedObject.Attributes["mount"].(schema.MapNestedAttribute)
	if env.CustomType == nil || env.NestedObject.CustomType == nil || mount.CustomType == nil || mount.NestedObject.CustomType == nil {
		t.Fatal("set/map nested attributes: no precomputed type")
	}
	if _, ok := pod.Attributes["custom"].(schema.SingleNestedAttribute).CustomType.(customObject); !ok {
		t.Error("a CustomType the schema set was replaced")
	}
	rules := after.Blocks["rules"].(schema.ListNestedBlock)
	inner := rules.NestedObject.Blocks["inner"].(schema.SetNestedBlock)
	if rules.CustomType == nil || rules.NestedObject.CustomType == nil || inner.CustomType == nil ||
		after.Blocks["timeouts"].(schema.SingleNestedBlock).CustomType == nil {
		t.Fatal("blocks: no precomputed type")
	}
}

func TestPrecomputeTypesLeavesTheInputAlone(t *testing.T) {
	in := nested()
	_ = tfvalues.PrecomputeTypes(in)
	if in.Attributes["pod"].(schema.SingleNestedAttribute).CustomType != nil {
		t.Fatal("the input schema's attribute map was modified")
	}
}
