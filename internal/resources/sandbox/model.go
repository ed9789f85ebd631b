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
	PodTemplate          types.Object   `tfsdk:"pod_template"`
	VolumeClaimTemplates types.List     `tfsdk:"volume_claim_templates"`
	Service              types.Bool     `tfsdk:"service"`
	OperatingMode        types.String   `tfsdk:"operating_mode"`
	ShutdownTime         types.String   `tfsdk:"shutdown_time"`
	ShutdownPolicy       types.String   `tfsdk:"shutdown_policy"`
	WaitForReady         types.Bool     `tfsdk:"wait_for_ready"`
	Ready                types.Bool     `tfsdk:"ready"`
	ServiceFQDN          types.String   `tfsdk:"service_fqdn"`
	PodIPs               types.List     `tfsdk:"pod_ips"`
	NodeName             types.String   `tfsdk:"node_name"`
	Timeouts             timeouts.Value `tfsdk:"timeouts"`
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
	var d diag.Diagnostics
	m.PodTemplate, m.VolumeClaimTemplates, m.Service, d = blueprint.Flatten(ctx, sb.Spec.SandboxBlueprint, m.PodTemplate, m.VolumeClaimTemplates, m.Service)
	diags.Append(d...)
	m.OperatingMode = tfvalues.StringOr(string(sb.Spec.OperatingMode), string(agentsv1beta1.SandboxOperatingModeRunning))
	policy := ""
	if sb.Spec.ShutdownPolicy != nil {
		policy = string(*sb.Spec.ShutdownPolicy)
	}
	m.ShutdownPolicy = tfvalues.StringOr(policy, string(agentsv1beta1.ShutdownPolicyRetain))
	m.ShutdownTime = tfvalues.Time(rfc3339(sb.Spec.ShutdownTime), m.ShutdownTime)
	if m.WaitForReady.IsNull() || m.WaitForReady.IsUnknown() {
		m.WaitForReady = types.BoolValue(true) // import: the default
	}
	diags.Append(m.setStatus(ctx, sb)...)
	return diags
}

// setStatus copies the status attributes from the live sandbox.
func (m *resourceModel) setStatus(ctx context.Context, sb *agentsv1beta1.Sandbox) diag.Diagnostics {
	var diags diag.Diagnostics
	m.Ready, m.ServiceFQDN, m.PodIPs, m.NodeName, diags = status(ctx, sb)
	return diags
}

func status(ctx context.Context, sb *agentsv1beta1.Sandbox) (ready types.Bool, fqdn types.String, ips types.List, node types.String, diags diag.Diagnostics) {
	ready = types.BoolValue(meta.IsStatusConditionTrue(sb.Status.Conditions, agentsv1beta1.SandboxConditionReady.String()))
	fqdn = types.StringValue(sb.Status.ServiceFQDN)
	node = types.StringValue(sb.Status.NodeName)
	podIPs := sb.Status.PodIPs
	if podIPs == nil {
		podIPs = []string{} // always a list, so a configuration can index it
	}
	ips, diags = types.ListValueFrom(ctx, types.StringType, podIPs)
	return ready, fqdn, ips, node, diags
}

// rfc3339 is an API time as RFC 3339 in UTC, as the API server stores it
// ("" when unset).
func rfc3339(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
