package podtemplate

import (
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// DataSourceAttribute returns `pod_template` for a data source schema: the
// same shape as Attribute (so Flatten fills both), every attribute computed.
// It is derived from the resource schema, so the two cannot drift apart.
func DataSourceAttribute() dsschema.SingleNestedAttribute {
	a := Attribute()
	return dsschema.SingleNestedAttribute{
		Computed:            true,
		MarkdownDescription: "The pod behind the sandbox, as the cluster has it (same attributes as the resource's `pod_template`).",
		Attributes:          tfvalues.DataSourceAttributes(a.Attributes),
	}
}
