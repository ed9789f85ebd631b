package tfvalues

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// typed is what every schema attribute is (resource, data source and
// provider schemas alike): it knows its value type.
type typed interface {
	GetType() attr.Type
}

// ObjectType is the object type of a set of schema attributes, as the
// framework derives it: the type models of those attributes must convert
// to and from. Compute it once (in a package variable) from the same
// attribute map the schema uses, so the two cannot disagree.
func ObjectType[A typed](attributes map[string]A) types.ObjectType {
	t := types.ObjectType{AttrTypes: make(map[string]attr.Type, len(attributes))}
	for name, a := range attributes {
		t.AttrTypes[name] = a.GetType()
	}
	return t
}

// ElementType is the object type of the elements of a nested attribute
// (list, set or map nested), or the type of a single nested attribute. It
// panics on any other attribute: that is a mistake in the provider's code,
// found by the first test that builds the schema.
func ElementType(a typed) types.ObjectType {
	var t = a.GetType()
	switch c := t.(type) {
	case types.ListType:
		t = c.ElemType
	case types.SetType:
		t = c.ElemType
	case types.MapType:
		t = c.ElemType
	}
	if o, ok := t.(types.ObjectType); ok {
		return o
	}
	if o, ok := t.(interface{ ObjectType() types.ObjectType }); ok {
		return o.ObjectType()
	}
	panic(fmt.Sprintf("tfvalues.ElementType: %T is not a nested attribute (its type is %s)", a, a.GetType()))
}

// NestedObjectType is the object type of attribute name inside t, which must
// be a single nested attribute. Like ElementType it panics on a mistake in
// the provider's code, which the first test that loads the package finds.
func NestedObjectType(t types.ObjectType, name string) types.ObjectType {
	o, ok := t.AttrTypes[name].(types.ObjectType)
	if !ok {
		panic(fmt.Sprintf("tfvalues.NestedObjectType: attribute %q of %s is not a single nested attribute", name, t))
	}
	return o
}

// CheckModel reports whether model (a pointer to a struct with tfsdk tags)
// fits t: an object of type t with every attribute null reads into it and
// converts back to the same object. Every family's tests call it for each
// model whose type is derived from the schema, so a field the schema lacks,
// an attribute the model lacks, or a field of the wrong kind fails a unit
// test instead of a plan.
func CheckModel(ctx context.Context, t types.ObjectType, model any) error {
	nulls := map[string]tftypes.Value{}
	for name, at := range t.AttrTypes {
		nulls[name] = tftypes.NewValue(at.TerraformType(ctx), nil)
	}
	v, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), nulls))
	if err != nil {
		return fmt.Errorf("building a null-attribute %s: %w", t, err)
	}
	obj, ok := v.(types.Object)
	if !ok {
		return fmt.Errorf("%s built a %T, not an object", t, v)
	}
	if d := obj.As(ctx, model, basetypes.ObjectAsOptions{}); d.HasError() {
		return fmt.Errorf("reading %s into %T: %v", t, model, d)
	}
	back, d := types.ObjectValueFrom(ctx, t.AttrTypes, model)
	if d.HasError() {
		return fmt.Errorf("converting %T to %s: %v", model, t, d)
	}
	if !back.Equal(obj) {
		return fmt.Errorf("%T converts to %s, want %s", model, back, obj)
	}
	return nil
}

// DataSourceAttributes are resource attributes as a data source reports
// them: the same names, types and descriptions, every attribute computed
// (defaults, plan modifiers and validators dropped). A data source that
// shows what a resource manages derives its attributes with it, so the two
// cannot drift apart and one Flatten fills both.
func DataSourceAttributes(in map[string]schema.Attribute) map[string]dsschema.Attribute {
	out := make(map[string]dsschema.Attribute, len(in))
	for name, a := range in {
		out[name] = DataSourceAttribute(a)
	}
	return out
}

// DataSourceAttribute is one attribute of DataSourceAttributes. It panics on
// an attribute kind it has no form for: a mistake in the provider's code,
// found by the first test that builds the schema.
func DataSourceAttribute(a schema.Attribute) dsschema.Attribute {
	desc := a.GetMarkdownDescription()
	switch a := a.(type) {
	case schema.StringAttribute:
		return dsschema.StringAttribute{Computed: true, MarkdownDescription: desc}
	case schema.BoolAttribute:
		return dsschema.BoolAttribute{Computed: true, MarkdownDescription: desc}
	case schema.Int64Attribute:
		return dsschema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	case schema.ListAttribute:
		return dsschema.ListAttribute{Computed: true, ElementType: a.ElementType, MarkdownDescription: desc}
	case schema.MapAttribute:
		return dsschema.MapAttribute{Computed: true, ElementType: a.ElementType, MarkdownDescription: desc}
	case schema.SingleNestedAttribute:
		return dsschema.SingleNestedAttribute{Computed: true, MarkdownDescription: desc, Attributes: DataSourceAttributes(a.Attributes)}
	case schema.ListNestedAttribute:
		return dsschema.ListNestedAttribute{
			Computed:            true,
			MarkdownDescription: desc,
			NestedObject:        dsschema.NestedAttributeObject{Attributes: DataSourceAttributes(a.NestedObject.Attributes)},
		}
	default:
		// A new attribute kind in a resource schema must be added here.
		panic(fmt.Sprintf("tfvalues.DataSourceAttribute: no data source form for %T", a))
	}
}
