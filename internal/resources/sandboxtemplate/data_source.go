package sandboxtemplate

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// NewDataSource is registered in the provider. It reads any
// SandboxTemplate, whoever manages it, in the resource's terms.
func NewDataSource() datasource.DataSource {
	return object.NewDataSource[dataSourceModel](&object.DataSourceFamily[dataSourceModel]{
		Kind:     Kind,
		TypeName: "sandbox_template",
		Schema:   dataSourceSchema,
		Flatten:  flattenDataSource,
	})
}

type dataSourceModel struct {
	object.DataSourceMetadata
	PodTemplate                types.Object `tfsdk:"pod_template"`
	VolumeClaimTemplates       types.List   `tfsdk:"volume_claim_templates"`
	Service                    types.Bool   `tfsdk:"service"`
	NetworkPolicyManagement    types.String `tfsdk:"network_policy_management"`
	NetworkPolicyName          types.String `tfsdk:"network_policy_name"`
	EnvVarsInjectionPolicy     types.String `tfsdk:"env_vars_injection_policy"`
	VolumeClaimTemplatesPolicy types.String `tfsdk:"volume_claim_templates_policy"`
	NetworkPolicyRendered      types.String `tfsdk:"network_policy_rendered"`
}

func dataSourceSchema(context.Context) schema.Schema {
	attrs := object.DataSourceMetadataAttributes("SandboxTemplate")
	pt := podtemplate.DataSourceAttribute()
	pt.MarkdownDescription = "The pod of the sandboxes made from the template (same attributes as the resource's `pod_template`)."
	attrs["pod_template"] = pt
	attrs["volume_claim_templates"] = blueprint.VolumeClaimTemplatesDataSourceAttribute()
	attrs["service"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether sandboxes get a headless Service (`spec.service`); null when unset (the controller then keeps an existing Service and creates none)."}
	attrs["network_policy_management"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`Managed` or `Unmanaged`."}
	attrs["network_policy_name"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "Name of the NetworkPolicy the controller keeps for the template (`<template>-network-policy`) " +
			"when management is `Managed`, else null. Read it with the `agentsandbox_network_policy` data source.",
	}
	attrs["env_vars_injection_policy"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`Allowed`, `Overrides` or `Disallowed`."}
	attrs["volume_claim_templates_policy"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`Disallowed`, `Allowed` or `Overrides`."}
	attrs["network_policy_rendered"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The template's custom network policy rules (`spec.networkPolicy`: `ingress` and `egress`) " +
			"as canonical JSON, the same form as the resource's `network_policy_rendered`; null when the template uses the " +
			"controller's default.",
	}
	return schema.Schema{
		MarkdownDescription: "Reads a SandboxTemplate (`extensions.agents.x-k8s.io/v1beta1`) as the cluster has it, " +
			"whoever manages it, in the terms of the `agentsandbox_sandbox_template` resource.",
		Attributes: attrs,
	}
}

// flattenDataSource fills m from the live template.
func flattenDataSource(ctx context.Context, live *unstructured.Unstructured, m *dataSourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	t, err := object.Decode[extv1beta1.SandboxTemplate](Kind, live)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read %s", ref), err.Error())
		return diags
	}
	var d diag.Diagnostics
	m.PodTemplate, m.VolumeClaimTemplates, m.Service, d = blueprint.Flatten(ctx, t.Spec.SandboxBlueprint, podtemplate.Null(), types.ListNull(blueprint.VolumeClaimTemplateType), types.BoolNull())
	diags.Append(d...)
	m.NetworkPolicyManagement = tfvalues.StringOr(string(t.Spec.NetworkPolicyManagement), string(extv1beta1.NetworkPolicyManagementManaged))
	m.EnvVarsInjectionPolicy = tfvalues.StringOr(string(t.Spec.EnvVarsInjectionPolicy), string(extv1beta1.EnvVarsInjectionPolicyDisallowed))
	m.VolumeClaimTemplatesPolicy = tfvalues.StringOr(string(t.Spec.VolumeClaimTemplatesPolicy), string(extv1beta1.VolumeClaimTemplatesPolicyDisallowed))
	m.NetworkPolicyName = types.StringNull()
	if m.NetworkPolicyManagement.ValueString() == string(extv1beta1.NetworkPolicyManagementManaged) {
		m.NetworkPolicyName = types.StringValue(sandboxapi.TemplateNetworkPolicyName(live.GetName()))
	}
	// As JSON: a template written by other means may hold rules beyond
	// the resource's network_policy terms, and reading must not fail on them.
	rendered, _, err := liveNetworkPolicy(ctx, live, false)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read the network policy rules of %s", ref), err.Error())
		return diags
	}
	m.NetworkPolicyRendered = rendered
	return diags
}
