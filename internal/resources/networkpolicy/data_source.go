package networkpolicy

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

var (
	_ datasource.DataSource              = (*networkPolicyDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*networkPolicyDataSource)(nil)
)

// NewDataSource is registered in the provider.
func NewDataSource() datasource.DataSource { return &networkPolicyDataSource{} }

// networkPolicyDataSource reads any NetworkPolicy in the canonical form of
// `rendered`, e.g. the one the agent-sandbox controller manages for a
// template, so that a configuration can show or check what is enforced.
type networkPolicyDataSource struct {
	meta *conn.Meta
}

type dataSourceModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Namespace   types.String `tfsdk:"namespace"`
	Labels      types.Map    `tfsdk:"labels"`
	Annotations types.Map    `tfsdk:"annotations"`
	Rendered    types.String `tfsdk:"rendered"`
}

func (d *networkPolicyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_network_policy"
}

func (d *networkPolicyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a NetworkPolicy, whoever manages it, and shows its spec in the same canonical JSON as " +
			"`agentsandbox_network_policy.rendered`: for example the policy the agent-sandbox controller keeps for a " +
			"template with managed network policy (`<template>-network-policy`), to review or check what it enforces.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<namespace>/<name>`.",
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the NetworkPolicy.",
				Validators:          []validator.String{validators.DNSSubdomainName()},
			},
			"namespace": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: fmt.Sprintf("Namespace of the NetworkPolicy. Defaults to `%s`.", object.DefaultNamespace),
				Validators:          []validator.String{validators.DNSLabelName()},
			},
			"labels": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "All labels of the NetworkPolicy.",
			},
			"annotations": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "All annotations of the NetworkPolicy.",
			},
			"rendered": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The NetworkPolicy `spec` as canonical JSON (sorted keys, explicit protocols, empty rule lists shown as `[]`).",
			},
		},
	}
}

func (d *networkPolicyDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	d.meta = meta
}

func (d *networkPolicyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m dataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ns := m.Namespace.ValueString()
	if ns == "" {
		ns = object.DefaultNamespace
	}
	live, found, diags := Kind.Read(ctx, d.meta, ns, m.Name.ValueString())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ref := Kind.Ref(ns, m.Name.ValueString())
	if !found {
		resp.Diagnostics.AddError(fmt.Sprintf("%s not found", ref),
			fmt.Sprintf("The cluster has no %s. Check the name and namespace; a policy the agent-sandbox controller "+
				"manages for a template is named <template>-network-policy and exists only while the template's network "+
				"policy management is Managed.", ref))
		return
	}
	spec, err := liveSpec(live.Object)
	if err == nil {
		var s string
		s, err = renderJSON(spec)
		m.Rendered = types.StringValue(s)
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Cannot read %s", ref), err.Error())
		return
	}
	m.ID = types.StringValue(object.ID(ns, live.GetName()))
	m.Namespace = types.StringValue(ns)
	m.Labels, diags = types.MapValueFrom(ctx, types.StringType, nonNil(live.GetLabels()))
	resp.Diagnostics.Append(diags...)
	m.Annotations, diags = types.MapValueFrom(ctx, types.StringType, nonNil(live.GetAnnotations()))
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// nonNil makes an absent map an empty one, so that `labels` is always a
// map a configuration can index or iterate.
func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
