package sandbox

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// NewDataSource is registered in the provider. It reads any Sandbox (one
// this configuration manages, one a warm pool or claim made, one made by
// hand) with its live status.
func NewDataSource() datasource.DataSource {
	return object.NewDataSource(&object.DataSourceFamily[dataSourceModel]{
		Kind: Kind,
		Description: "Reads a Sandbox (`agents.x-k8s.io/v1beta1`) and its live status, whoever created it: one " +
			"managed by `agentsandbox_sandbox`, one a warm pool or claim made, or one made by hand.",
		Attributes: dataSourceAttributes,
		Hint:       "A sandbox taken from a warm pool is named like the pool plus a suffix; a claim's status names its sandbox.",
		Flatten:    flattenDataSource,
	})
}

type dataSourceModel struct {
	object.DataSourceMetadata
	sandboxModel
	Conditions types.List `tfsdk:"conditions"`
}

type conditionModel struct {
	Type    types.String `tfsdk:"type"`
	Status  types.String `tfsdk:"status"`
	Reason  types.String `tfsdk:"reason"`
	Message types.String `tfsdk:"message"`
}

// conditionAttributes are the attributes of one condition, shared by the
// schema and the type of its values (derived from them).
var conditionAttributes = map[string]schema.Attribute{
	"type":    computedString("Condition type."),
	"status":  computedString("`True`, `False` or `Unknown`."),
	"reason":  computedString("Machine-readable reason, e.g. `DependenciesReady`, `SandboxSuspended`, `SandboxExpired`."),
	"message": computedString("Human-readable detail."),
}

var conditionType = tfvalues.ObjectType(conditionAttributes)

func computedString(d string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, MarkdownDescription: d}
}

func dataSourceAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	attrs["pod_template"] = podtemplate.DataSourceAttribute()
	attrs["volume_claim_templates"] = blueprint.VolumeClaimTemplatesDataSourceAttribute()
	str := computedString
	attrs["service"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the sandbox asks for a headless Service (`spec.service`); null when unset (the controller then keeps an existing Service and creates none)."}
	attrs["operating_mode"] = str("`Running` or `Suspended`: what the sandbox is asked to be (the conditions say whether it is).")
	attrs["shutdown_time"] = str("RFC 3339 expiry time, null when none.")
	attrs["shutdown_policy"] = str("`Retain` or `Delete`.")
	attrs["ready"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the `Ready` condition is true."}
	attrs["service_fqdn"] = str("DNS name of the headless Service, empty without one.")
	attrs["pod_ips"] = schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Addresses of the pod; empty while there is none."}
	attrs["node_name"] = str("Node of the pod; empty while there is none.")
	attrs["conditions"] = schema.ListNestedAttribute{
		Computed: true,
		MarkdownDescription: "The conditions the controller reports: `Ready`, `Suspended`, `PodScheduled`, `Finished`, " +
			"each with its status, reason and message.",
		NestedObject: schema.NestedAttributeObject{Attributes: conditionAttributes},
	}
	return attrs
}

// flattenDataSource fills m from the live sandbox, its conditions included.
func flattenDataSource(ctx context.Context, live *unstructured.Unstructured, m *dataSourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	sb, err := object.Decode[agentsv1beta1.Sandbox](Kind, live)
	if err != nil {
		diags.AddError("Cannot read the Sandbox", err.Error())
		return diags
	}
	m.sandboxModel = sandboxModel{
		PodTemplate: podtemplate.Null(), VolumeClaimTemplates: types.ListNull(blueprint.VolumeClaimTemplateType),
		Service: types.BoolNull(), ShutdownTime: types.StringNull(),
	}
	diags.Append(m.flatten(ctx, sb)...)
	conds := make([]conditionModel, 0, len(sb.Status.Conditions))
	for _, c := range sb.Status.Conditions {
		conds = append(conds, conditionModel{
			Type: types.StringValue(c.Type), Status: types.StringValue(string(c.Status)),
			Reason: types.StringValue(c.Reason), Message: types.StringValue(c.Message),
		})
	}
	var d diag.Diagnostics
	m.Conditions, d = types.ListValueFrom(ctx, conditionType, conds)
	diags.Append(d...)
	return diags
}
