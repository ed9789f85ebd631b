package warmpool

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// NewDataSource is registered in the provider. It reads a pool's spec and
// live status, whoever manages the pool: to gate on its readiness, or to
// target it from other tools.
func NewDataSource() datasource.DataSource {
	return object.NewDataSource(&object.DataSourceFamily[dataSourceModel]{
		Kind: Kind,
		Description: "Reads a `SandboxWarmPool` and its live status: how many sandboxes it wants, has and has " +
			"ready. Reads the cluster on every plan.",
		Attributes: dataSourceAttributes,
		Hint:       "Pools made by agentsandbox_warm_pool live in the namespace of that resource.",
		Flatten:    flattenDataSource,
	})
}

type dataSourceModel struct {
	object.DataSourceMetadata
	poolModel
	CurrentReplicas types.Int64  `tfsdk:"current_replicas"`
	Ready           types.Bool   `tfsdk:"ready"`
	Selector        types.String `tfsdk:"selector"`
}

func dataSourceAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	attrs["template"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the SandboxTemplate the pool's sandboxes are made from."}
	attrs["replicas"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of sandboxes the pool wants (`spec.replicas`, whoever set it)."}
	attrs["update_strategy"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`Recreate` or `OnReplenish`."}
	attrs["current_replicas"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of unclaimed sandboxes the pool has now (`status.replicas`)."}
	attrs["ready_replicas"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "Number of them that are ready (`status.readyReplicas`)."}
	attrs["ready"] = schema.BoolAttribute{
		Computed: true,
		MarkdownDescription: "Whether the pool is ready: the controller has acted on its current spec and exactly " +
			"`replicas` sandboxes exist and are ready (the condition `agentsandbox_warm_pool` waits for).",
	}
	attrs["selector"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "Label selector of the pool's unclaimed sandboxes, as the pool reports it (`status.selector`); empty until the controller has reported.",
	}
	return attrs
}

// flattenDataSource fills m from the live pool.
func flattenDataSource(_ context.Context, live *unstructured.Unstructured, m *dataSourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	pool, err := object.Decode[extv1beta1.SandboxWarmPool](Kind, live)
	if err != nil {
		diags.AddError("Cannot read the warm pool", err.Error())
		return diags
	}
	ready, _, _ := poolReady(live)
	m.set(pool)
	m.CurrentReplicas = types.Int64Value(int64(pool.Status.Replicas))
	m.Ready = types.BoolValue(ready)
	m.Selector = types.StringValue(pool.Status.Selector)
	return diags
}
