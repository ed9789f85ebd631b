package podtemplate

import (
	"fmt"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// DataSourceAttribute returns `pod_template` for a data source schema: the
// same shape as Attribute (so Flatten fills both), every attribute computed.
// It is derived from the resource schema, so the two cannot drift apart.
func DataSourceAttribute() dsschema.SingleNestedAttribute {
	a := Attribute()
	return dsschema.SingleNestedAttribute{
		Computed:            true,
		MarkdownDescription: "The pod behind the sandbox, as the cluster has it (same attributes as the resource's `pod_template`).",
		Attributes:          dataSourceAttributes(a.Attributes),
	}
}

func dataSourceAttributes(in map[string]schema.Attribute) map[string]dsschema.Attribute {
	out := make(map[string]dsschema.Attribute, len(in))
	for name, a := range in {
		out[name] = dataSourceAttribute(a)
	}
	return out
}

func dataSourceAttribute(a schema.Attribute) dsschema.Attribute {
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
		return dsschema.SingleNestedAttribute{Computed: true, MarkdownDescription: desc, Attributes: dataSourceAttributes(a.Attributes)}
	case schema.ListNestedAttribute:
		return dsschema.ListNestedAttribute{
			Computed:            true,
			MarkdownDescription: desc,
			NestedObject:        dsschema.NestedAttributeObject{Attributes: dataSourceAttributes(a.NestedObject.Attributes)},
		}
	default:
		// A new attribute kind in the resource schema must be added here.
		panic(fmt.Sprintf("podtemplate: no data source form for %T", a))
	}
}
