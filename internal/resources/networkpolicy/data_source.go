package networkpolicy

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// NewDataSource is registered in the provider. It reads any NetworkPolicy
// in the canonical form of `rendered`, e.g. the one the agent-sandbox
// controller manages for a template, so that a configuration can show or
// check what is enforced.
func NewDataSource() datasource.DataSource {
	return object.NewDataSource(&object.DataSourceFamily[dataSourceModel]{
		Kind: Kind,
		Description: "Reads a NetworkPolicy, whoever manages it, and shows its spec in the same canonical JSON as " +
			"`agentsandbox_network_policy.rendered`: for example the policy the agent-sandbox controller keeps for a " +
			"template with managed network policy (`<template>-network-policy`), to review or check what it enforces.",
		Attributes: dataSourceAttributes,
		Hint: "A policy the agent-sandbox controller manages for a template is named <template>-network-policy and " +
			"exists only while the template's network policy management is Managed.",
		Flatten: flattenDataSource,
	})
}

type dataSourceModel struct {
	object.DataSourceMetadata
	Rendered types.String `tfsdk:"rendered"`
}

func dataSourceAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		// No controller sets labels on a NetworkPolicy: this replaces the
		// identity attribute's description, which says one does.
		"labels": schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "All labels of the NetworkPolicy."},
		"rendered": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The NetworkPolicy `spec` as canonical JSON (sorted keys, explicit protocols, empty rule lists shown as `[]`).",
		},
	}
}

// flattenDataSource sets `rendered` from the live policy's spec.
func flattenDataSource(_ context.Context, live *unstructured.Unstructured, m *dataSourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	spec, err := liveSpec(live.Object)
	if err == nil {
		var s string
		s, err = renderJSON(spec)
		m.Rendered = types.StringValue(s)
	}
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read %s", Kind.Ref(live.GetNamespace(), live.GetName())), err.Error())
	}
	return diags
}
