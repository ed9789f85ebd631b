package warmpool

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// resourceModel is the resource's plan and state.
type resourceModel struct {
	object.Metadata
	poolModel
	ReplicasManagedExternally types.Bool     `tfsdk:"replicas_managed_externally"`
	WaitForReady              types.Bool     `tfsdk:"wait_for_ready"`
	Selector                  types.String   `tfsdk:"selector"`
	Timeouts                  timeouts.Value `tfsdk:"timeouts"`
}

// poolModel is what the resource and the data source both read the same
// way from a pool.
type poolModel struct {
	Template       types.String `tfsdk:"template"`
	Replicas       types.Int64  `tfsdk:"replicas"`
	UpdateStrategy types.String `tfsdk:"update_strategy"`
	ReadyReplicas  types.Int64  `tfsdk:"ready_replicas"`
}

// set fills p from the live pool, server defaults applied.
func (p *poolModel) set(pool *extv1beta1.SandboxWarmPool) {
	p.Template = types.StringValue(pool.Spec.TemplateRef.Name)
	p.Replicas = types.Int64Value(liveReplicas(pool))
	p.UpdateStrategy = types.StringValue(liveStrategy(pool))
	p.ReadyReplicas = types.Int64Value(int64(pool.Status.ReadyReplicas))
}

// external says whether spec.replicas belongs to someone else.
func (m resourceModel) external() bool { return m.ReplicasManagedExternally.ValueBool() }

// spec is the pool spec the model asks for. Every field the provider
// manages is set explicitly, defaults included, so that a value changed out
// of band is taken back by the next apply; spec.replicas is left out
// entirely when an autoscaler owns it.
func (m resourceModel) spec() extv1beta1.SandboxWarmPoolSpec {
	s := extv1beta1.SandboxWarmPoolSpec{
		TemplateRef:    extv1beta1.SandboxTemplateRef{Name: m.Template.ValueString()},
		UpdateStrategy: &extv1beta1.SandboxWarmPoolUpdateStrategy{Type: extv1beta1.SandboxWarmPoolUpdateStrategyType(m.UpdateStrategy.ValueString())},
	}
	if s.UpdateStrategy.Type == "" {
		s.UpdateStrategy.Type = extv1beta1.OnReplenishSandboxWarmPoolUpdateStrategyType
	}
	if !m.external() {
		n := int32(defaultReplicas)
		if !m.Replicas.IsNull() && !m.Replicas.IsUnknown() {
			n = int32(m.Replicas.ValueInt64())
		}
		s.Replicas = &n
	}
	return s
}

// build is the object the plan describes, ready for a server-side apply.
func build(ctx context.Context, m resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	obj := Kind.New()
	diags := m.Expand(ctx, obj)
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(new(m.spec()))
	if err != nil {
		diags.AddError("Cannot build the warm pool", err.Error())
		return nil, diags
	}
	obj.Object["spec"] = spec
	return obj, diags
}

// liveReplicas is spec.replicas with the API's default applied.
func liveReplicas(p *extv1beta1.SandboxWarmPool) int64 {
	if p.Spec.Replicas == nil {
		return defaultReplicas
	}
	return int64(*p.Spec.Replicas)
}

// liveStrategy is spec.updateStrategy.type with the API's default applied.
func liveStrategy(p *extv1beta1.SandboxWarmPool) string {
	if p.Spec.UpdateStrategy == nil || p.Spec.UpdateStrategy.Type == "" {
		return string(extv1beta1.OnReplenishSandboxWarmPoolUpdateStrategyType)
	}
	return string(p.Spec.UpdateStrategy.Type)
}

// flatten brings m in line with the live pool. Every spec field is read
// back, so an out-of-band change shows as a diff; server defaults are
// applied on the way, so they never do. Attributes that exist only in
// Terraform (wait_for_ready, replicas_managed_externally, timeouts) keep
// their value, or get their default after an import.
func flatten(ctx context.Context, live *unstructured.Unstructured, m *resourceModel, fieldManager string) diag.Diagnostics {
	md, diags := object.Flatten(ctx, live, m.Metadata, fieldManager)
	m.Metadata = md
	pool, err := object.Decode[extv1beta1.SandboxWarmPool](Kind, live)
	if err != nil {
		diags.AddError("Cannot read the warm pool", err.Error())
		return diags
	}
	m.set(pool)
	m.Selector = types.StringValue(sandboxapi.WarmPoolSelector(pool.Name))
	if m.WaitForReady.IsNull() || m.WaitForReady.IsUnknown() {
		m.WaitForReady = types.BoolValue(true)
	}
	if m.ReplicasManagedExternally.IsNull() || m.ReplicasManagedExternally.IsUnknown() {
		m.ReplicasManagedExternally = types.BoolValue(false)
	}
	return diags
}
