package sandbox

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
)

var _ datasource.DataSourceWithConfigure = (*sandboxDataSource)(nil)

// NewDataSource is registered in the provider.
func NewDataSource() datasource.DataSource { return &sandboxDataSource{} }

// sandboxDataSource reads any Sandbox (one this configuration manages, one
// a warm pool or claim made, one made by hand) with its live status.
type sandboxDataSource struct {
	meta *conn.Meta
}

type dataSourceModel struct {
	object.DataSourceMetadata
	PodTemplate          types.Object `tfsdk:"pod_template"`
	VolumeClaimTemplates types.List   `tfsdk:"volume_claim_templates"`
	Service              types.Bool   `tfsdk:"service"`
	OperatingMode        types.String `tfsdk:"operating_mode"`
	ShutdownTime         types.String `tfsdk:"shutdown_time"`
	ShutdownPolicy       types.String `tfsdk:"shutdown_policy"`
	Ready                types.Bool   `tfsdk:"ready"`
	ServiceFQDN          types.String `tfsdk:"service_fqdn"`
	PodIPs               types.List   `tfsdk:"pod_ips"`
	NodeName             types.String `tfsdk:"node_name"`
	Conditions           types.List   `tfsdk:"conditions"`
}

type conditionModel struct {
	Type    types.String `tfsdk:"type"`
	Status  types.String `tfsdk:"status"`
	Reason  types.String `tfsdk:"reason"`
	Message types.String `tfsdk:"message"`
}

var conditionType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"type": types.StringType, "status": types.StringType, "reason": types.StringType, "message": types.StringType,
}}

func (d *sandboxDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox"
}

func (d *sandboxDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := object.DataSourceMetadataAttributes("Sandbox")
	attrs["pod_template"] = podtemplate.DataSourceAttribute()
	attrs["volume_claim_templates"] = blueprint.VolumeClaimTemplatesDataSourceAttribute()
	str := func(d string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: d}
	}
	attrs["service"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the sandbox asks for a headless Service."}
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
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"type":    str("Condition type."),
			"status":  str("`True`, `False` or `Unknown`."),
			"reason":  str("Machine-readable reason, e.g. `DependenciesReady`, `SandboxSuspended`, `SandboxExpired`."),
			"message": str("Human-readable detail."),
		}},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a Sandbox (`agents.x-k8s.io/v1beta1`) and its live status, whoever created it: one " +
			"managed by `agentsandbox_sandbox`, one a warm pool or claim made, or one made by hand.",
		Attributes: attrs,
	}
}

func (d *sandboxDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	d.meta = meta
}

func (d *sandboxDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m dataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	live, md, diags := Kind.Lookup(ctx, d.meta, m.DataSourceMetadata,
		"A sandbox taken from a warm pool is named like the pool plus a suffix; a claim's status names its sandbox.")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.DataSourceMetadata = md
	sb, err := parse(live)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the Sandbox", err.Error())
		return
	}
	m.PodTemplate, m.VolumeClaimTemplates, m.Service, diags = blueprint.Flatten(ctx, sb.Spec.SandboxBlueprint,
		podtemplate.Null(), types.ListNull(blueprint.VolumeClaimTemplateType))
	resp.Diagnostics.Append(diags...)
	m.OperatingMode = orDefault(string(sb.Spec.OperatingMode), "Running")
	m.ShutdownTime = flattenTime(sb.Spec.ShutdownTime, types.StringNull())
	m.ShutdownPolicy = types.StringValue("Retain")
	if sb.Spec.ShutdownPolicy != nil {
		m.ShutdownPolicy = types.StringValue(string(*sb.Spec.ShutdownPolicy))
	}
	m.Ready, m.ServiceFQDN, m.PodIPs, m.NodeName, diags = status(ctx, sb)
	resp.Diagnostics.Append(diags...)
	conds := make([]conditionModel, 0, len(sb.Status.Conditions))
	for _, c := range sb.Status.Conditions {
		conds = append(conds, conditionModel{
			Type: types.StringValue(c.Type), Status: types.StringValue(string(c.Status)),
			Reason: types.StringValue(c.Reason), Message: types.StringValue(c.Message),
		})
	}
	m.Conditions, diags = types.ListValueFrom(ctx, conditionType, conds)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
