package sandboxtemplate

import (
	"context"

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
)

// NewDataSource is registered in the provider. It reads any
// SandboxTemplate, whoever manages it, in the resource's terms.
func NewDataSource() datasource.DataSource {
	return object.NewDataSource(&object.DataSourceFamily[dataSourceModel]{
		Kind: Kind,
		Description: "Reads a SandboxTemplate (`extensions.agents.x-k8s.io/v1beta1`) as the cluster has it, " +
			"whoever manages it, in the terms of the `agentsandbox_sandbox_template` resource.",
		Attributes: dataSourceAttributes,
		Flatten:    flattenDataSource,
	})
}

type dataSourceModel struct {
	object.DataSourceMetadata
	templateModel
	NetworkPolicyName types.String `tfsdk:"network_policy_name"`
}

func dataSourceAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
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
	return attrs
}

// flattenDataSource fills m from the live template. As JSON only: a
// template written by other means may hold rules beyond the resource's
// network_policy terms, and reading must not fail on them.
func flattenDataSource(ctx context.Context, live *unstructured.Unstructured, m *dataSourceModel) diag.Diagnostics {
	m.templateModel = templateModel{PodTemplate: podtemplate.Null(), VolumeClaimTemplates: types.ListNull(blueprint.VolumeClaimTemplateType), Service: types.BoolNull()}
	_, diags := m.flatten(ctx, live, false)
	m.NetworkPolicyName = types.StringNull()
	if m.NetworkPolicyManagement.ValueString() == string(extv1beta1.NetworkPolicyManagementManaged) {
		m.NetworkPolicyName = types.StringValue(sandboxapi.TemplateNetworkPolicyName(live.GetName()))
	}
	return diags
}
