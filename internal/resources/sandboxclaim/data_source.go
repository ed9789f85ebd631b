package sandboxclaim

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
)

// NewDataSource is registered in the provider. It reads a claim and its
// live status, whoever made it (the sandbox router makes claims too): which
// sandbox it holds, where, and whether it is ready or why not.
func NewDataSource() datasource.DataSource {
	return object.NewDataSource(&object.DataSourceFamily[dataSourceModel]{
		Kind: Kind,
		Description: "Reads a `SandboxClaim` and its live status: the sandbox it holds, its pod IPs and service FQDN, and whether " +
			"it is ready, or the controller's reason why not. Works for claims made by any client (the sandbox router, " +
			"an SDK) as well as by `agentsandbox_sandbox_claim`. Reads the cluster on every plan.",
		Attributes: dataSourceAttributes,
		Hint:       "A claim with shutdown policy Delete or DeleteForeground is deleted by the controller when it expires.",
		Flatten:    flattenDataSource,
	})
}

type dataSourceModel struct {
	object.DataSourceMetadata
	claimModel
	ReadyReason  types.String `tfsdk:"ready_reason"`
	ReadyMessage types.String `tfsdk:"ready_message"`
}

func dataSourceAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	attrs["warm_pool"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the SandboxWarmPool the claim takes its sandbox from."}
	attrs["shutdown_time"] = schema.StringAttribute{Computed: true, MarkdownDescription: "RFC 3339 time at which the claim expires; null when none is set."}
	attrs["ttl_seconds_after_finished"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "Seconds after its sandbox finished at which the claim expires; null when none is set."}
	attrs["shutdown_policy"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`Delete`, `DeleteForeground` or `Retain`."}
	attrs["env"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: "Environment variables the claim injects into its sandbox.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name":           schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the variable."},
			"value":          schema.StringAttribute{Computed: true, Sensitive: true, MarkdownDescription: "Value of the variable."},
			"container_name": schema.StringAttribute{Computed: true, MarkdownDescription: "Container it is set in; null for the first one."},
		}},
	}
	attrs["additional_pod_metadata"] = schema.SingleNestedAttribute{
		Computed:            true,
		MarkdownDescription: "Labels and annotations the claim adds to its sandbox's pod.",
		Attributes: map[string]schema.Attribute{
			"labels":      schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Pod labels."},
			"annotations": schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Pod annotations."},
		},
	}
	vcts := blueprint.VolumeClaimTemplatesDataSourceAttribute()
	vcts.MarkdownDescription = "PersistentVolumeClaims the claim asks for its sandbox, on top of the template's " +
		"(`spec.volumeClaimTemplates`); null when none. A claim with them gets a cold-started sandbox, if its " +
		"template's `volume_claim_templates_policy` allows them."
	attrs["volume_claim_templates"] = vcts
	attrs["sandbox_name"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the Sandbox the claim holds; empty until one is bound."}
	attrs["pod_ips"] = schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "IP addresses of the sandbox's pod."}
	attrs["service_fqdn"] = schema.StringAttribute{Computed: true, MarkdownDescription: "DNS name of the headless " +
		"Service of the claim's sandbox (`status.sandbox.serviceFQDN`, reported by agent-sandbox v1.0.1 and later); " +
		"null on earlier releases, while no sandbox is bound, and when the sandbox has no Service."}
	attrs["ready"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the claim's `Ready` condition is true for its current generation."}
	attrs["ready_reason"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Reason of the `Ready` condition, e.g. `DependenciesReady`, `WarmPoolNotFound`, `ClaimExpired`; empty until reported."}
	attrs["ready_message"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Message of the `Ready` condition."}
	return attrs
}

// flattenDataSource fills m from the live claim.
func flattenDataSource(ctx context.Context, live *unstructured.Unstructured, m *dataSourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	// The resource's flattening, with nothing prior: what is live is shown.
	var rm resourceModel
	rm.Labels, rm.Annotations = types.MapNull(types.StringType), types.MapNull(types.StringType)
	rm.Env = types.ListNull(envType)
	rm.AdditionalPodMetadata = types.ObjectNull(podMetadataType.AttrTypes)
	rm.ShutdownTime = types.StringNull()
	rm.VolumeClaimTemplates = types.ListNull(blueprint.VolumeClaimTemplateType)
	diags.Append(flatten(ctx, live, &rm, "")...)
	claim, err := object.Decode[extv1beta1.SandboxClaim](Kind, live)
	if err != nil {
		diags.AddError("Cannot read the sandbox claim", err.Error())
		return diags
	}
	if diags.HasError() {
		return diags
	}
	st := readStatus(claim)
	m.claimModel = rm.claimModel
	m.ReadyReason, m.ReadyMessage = types.StringValue(st.reason), types.StringValue(st.message)
	return diags
}
