package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// resourceModel is the resource's state and plan.
type resourceModel struct {
	object.Metadata
	sandboxModel
	WaitForReady types.Bool     `tfsdk:"wait_for_ready"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

// sandboxModel is what the resource and the data source both show of a
// sandbox: its spec and its status.
type sandboxModel struct {
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
}

// build is the object the plan describes.
func (m resourceModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	bp, diags := blueprint.Expand(ctx, m.PodTemplate, m.VolumeClaimTemplates, m.Service)
	if diags.HasError() {
		return nil, diags
	}
	policy := agentsv1beta1.ShutdownPolicy(m.ShutdownPolicy.ValueString())
	spec := agentsv1beta1.SandboxSpec{
		SandboxBlueprint: bp,
		Lifecycle:        agentsv1beta1.Lifecycle{ShutdownPolicy: &policy},
		OperatingMode:    agentsv1beta1.SandboxOperatingMode(m.OperatingMode.ValueString()),
	}
	if !m.ShutdownTime.IsNull() {
		t, err := time.Parse(time.RFC3339, m.ShutdownTime.ValueString())
		if err != nil {
			diags.AddError("Invalid shutdown_time", fmt.Sprintf("%q is not an RFC 3339 time: %v", m.ShutdownTime.ValueString(), err))
			return nil, diags
		}
		mt := metav1.NewTime(t)
		spec.ShutdownTime = &mt
	}
	content, err := blueprint.Content(spec)
	if err != nil {
		diags.AddError("Cannot build the Sandbox", err.Error())
		return nil, diags
	}
	obj := Kind.New()
	diags.Append(m.Expand(ctx, obj)...)
	obj.Object["spec"] = content
	return obj, diags
}

// refresh brings m in line with the live sandbox: identity and managed
// metadata, the spec (keeping the prior spelling where the value is the
// same) and the status.
func (m *resourceModel) refresh(ctx context.Context, live *unstructured.Unstructured, fieldManager string) diag.Diagnostics {
	md, diags := object.Flatten(ctx, live, m.Metadata, fieldManager)
	m.Metadata = md
	sb, err := object.Decode[agentsv1beta1.Sandbox](Kind, live)
	if err != nil {
		diags.AddError("Cannot read the Sandbox", err.Error())
		return diags
	}
	diags.Append(m.flatten(ctx, sb)...)
	if m.WaitForReady.IsNull() || m.WaitForReady.IsUnknown() {
		m.WaitForReady = types.BoolValue(true) // import: the default
	}
	return diags
}

// flatten fills s from the live sandbox: the spec, keeping the prior
// spelling s holds where the value is the same (a data source's priors
// are null), and the status.
func (s *sandboxModel) flatten(ctx context.Context, sb *agentsv1beta1.Sandbox) diag.Diagnostics {
	var diags, d diag.Diagnostics
	s.PodTemplate, s.VolumeClaimTemplates, s.Service, d = blueprint.Flatten(ctx, sb.Spec.SandboxBlueprint, s.PodTemplate, s.VolumeClaimTemplates, s.Service)
	diags.Append(d...)
	s.OperatingMode = tfvalues.StringOr(string(sb.Spec.OperatingMode), string(agentsv1beta1.SandboxOperatingModeRunning))
	policy := ""
	if sb.Spec.ShutdownPolicy != nil {
		policy = string(*sb.Spec.ShutdownPolicy)
	}
	s.ShutdownPolicy = tfvalues.StringOr(policy, string(agentsv1beta1.ShutdownPolicyRetain))
	s.ShutdownTime = tfvalues.Time(rfc3339(sb.Spec.ShutdownTime), s.ShutdownTime)
	s.Ready = types.BoolValue(meta.IsStatusConditionTrue(sb.Status.Conditions, agentsv1beta1.SandboxConditionReady.String()))
	s.ServiceFQDN = types.StringValue(sb.Status.ServiceFQDN)
	s.NodeName = types.StringValue(sb.Status.NodeName)
	podIPs := sb.Status.PodIPs
	if podIPs == nil {
		podIPs = []string{} // always a list, so a configuration can index it
	}
	s.PodIPs, d = types.ListValueFrom(ctx, types.StringType, podIPs)
	diags.Append(d...)
	return diags
}

// rfc3339 is an API time as RFC 3339 in UTC, as the API server stores it
// ("" when unset).
func rfc3339(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
