package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_sandbox"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          sandboxapi.SandboxGVR,
	Kind:         agentsv1beta1.SandboxKind,
	ResourceType: ResourceType,
}

// family is the resource for internal/object. A cold start schedules a
// pod and pulls its image (5-30 s on GKE, more for a large image or a node
// scale-up); suspending deletes the pod, whose grace period is 30 s by
// default. Deletion is immediate (no finalizers); the pod, PVCs and
// Service are owned by the Sandbox and the garbage collector removes them
// after it is gone. The resource declares the whole spec (forced, and
// exclusive below spec): an out-of-band change or addition below it is
// drift, repaired by the next apply.
var family = &object.Family[resourceModel]{
	Kind:      Kind,
	FastRead:  true, // Refresh reads the live object, the state and the field manager only
	Schema:    resourceSchema,
	Timeouts:  object.Timeouts{Create: 10 * time.Minute, Update: 10 * time.Minute, Delete: 5 * time.Minute},
	Exclusive: []string{"spec"},
	Build: func(ctx context.Context, m *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
		return m.build(ctx)
	},
	Refresh: func(ctx context.Context, c object.Call, live *unstructured.Unstructured, m *resourceModel) diag.Diagnostics {
		// The model's spec attributes are the plan's (or the state's); the
		// refresh keeps their spelling and fills in the status.
		return m.refresh(ctx, live, c.Meta.FieldManager())
	},
	Wait:           wait,
	ValidateConfig: validateConfig,
	ModifyPlan:     modifyPlan,
}

// NewResource is registered in the provider.
func NewResource() resource.Resource { return object.NewResource(family) }

// validateConfig runs the checks across attributes: the pod template's,
// with the claim template names a volume mount may use, and unique claim
// template names.
func validateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m resourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	names, known := blueprint.ClaimTemplateNames(ctx, m.VolumeClaimTemplates)
	resp.Diagnostics.Append(podtemplate.Validate(ctx, path.Root("pod_template"), m.PodTemplate,
		podtemplate.Options{ClaimTemplateNames: names, SkipVolumeMountCheck: !known})...)
	resp.Diagnostics.Append(blueprint.ValidateVolumeClaimTemplates(ctx, path.Root("volume_claim_templates"), m.VolumeClaimTemplates)...)
	resp.Diagnostics.Append(blueprint.ValidateServiceName(m.Name, m.Service)...)
}

// modifyPlan says at plan time what the API will do with the change, from
// the plan alone (no request): a new sandbox cannot expire before it
// starts, and a changed pod spec reaches a running pod only when the
// controller next creates it.
func modifyPlan(ctx context.Context, meta *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	creating := req.State.Raw.IsNull()
	var prior types.Object
	if !creating {
		resp.Diagnostics.Append(tfvalues.GetStateAttribute(ctx, req.State, "pod_template", &prior)...)
	}
	resp.Diagnostics.Append(podtemplate.CheckServedOverrides(ctx, meta, sandboxapi.SandboxCRDName,
		agentsv1beta1.GroupVersion.Version, path.Root("pod_template"), plan.PodTemplate, prior)...)
	resp.Diagnostics.Append(podtemplate.CheckRuntimeClass(ctx, meta, "sandbox", path.Root("pod_template"), plan.PodTemplate, prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if creating && !plan.ShutdownTime.IsNull() && !plan.ShutdownTime.IsUnknown() {
		if t, err := time.Parse(time.RFC3339, plan.ShutdownTime.ValueString()); err == nil && !t.After(time.Now()) {
			resp.Diagnostics.AddAttributeError(path.Root("shutdown_time"), "Shutdown time in the past",
				fmt.Sprintf("%q has already passed, so the controller would tear the new sandbox down at once (and with "+
					"shutdown_policy \"Delete\", delete it, which the next plan would undo). Set a future time or remove "+
					"shutdown_time.", plan.ShutdownTime.ValueString()))
		}
		return
	}
	if creating {
		return
	}
	var state resourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if unchanged(plan, state) {
		// Terraform marked the status unknown because the configuration
		// differed from the state before the plan modifiers restored equal
		// spellings (a storage size written "1024Mi" for "1Gi"): nothing
		// will be written, so the status stays what it is.
		for name, v := range map[string]attr.Value{
			"ready": state.Ready, "service_fqdn": state.ServiceFQDN, "pod_ips": state.PodIPs, "node_name": state.NodeName,
		} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), v)...)
		}
		return
	}
	if plan.OperatingMode.ValueString() == string(agentsv1beta1.SandboxOperatingModeRunning) &&
		state.OperatingMode.ValueString() == string(agentsv1beta1.SandboxOperatingModeRunning) &&
		podSpecChanged(state.PodTemplate, plan.PodTemplate) {
		resp.Diagnostics.AddAttributeWarning(path.Root("pod_template"), "Running pod keeps its current spec",
			"The Sandbox is updated in place, but its controller does not recreate a running pod: new labels and "+
				"annotations reach the pod at once, everything else the next time the pod is created. To restart it with "+
				"the new spec while keeping its volumes, apply with operating_mode = \"Suspended\" and then \"Running\" again.")
	}
}

// unchanged reports whether the plan writes nothing: every attribute the
// configuration decides equals the state.
func unchanged(plan, state resourceModel) bool {
	return plan.Labels.Equal(state.Labels) && plan.Annotations.Equal(state.Annotations) &&
		plan.PodTemplate.Equal(state.PodTemplate) && plan.VolumeClaimTemplates.Equal(state.VolumeClaimTemplates) &&
		plan.Service.Equal(state.Service) && plan.OperatingMode.Equal(state.OperatingMode) &&
		plan.ShutdownTime.Equal(state.ShutdownTime) && plan.ShutdownPolicy.Equal(state.ShutdownPolicy) &&
		plan.WaitForReady.Equal(state.WaitForReady) && plan.Timeouts.Equal(state.Timeouts)
}

// podSpecChanged reports whether the pod template changes beyond the pod's
// labels and annotations (which the controller syncs to a running pod).
func podSpecChanged(state, plan types.Object) bool {
	if state.IsNull() || plan.IsNull() {
		return false
	}
	strip := func(o types.Object) types.Object {
		if o.IsUnknown() {
			return o
		}
		attrs := map[string]attr.Value{}
		for k, v := range o.Attributes() {
			attrs[k] = v
		}
		attrs["labels"] = types.MapNull(types.StringType)
		attrs["annotations"] = types.MapNull(types.StringType)
		out, d := types.ObjectValue(o.AttributeTypes(context.Background()), attrs)
		if d.HasError() {
			return o
		}
		return out
	}
	return !strip(state).Equal(strip(plan))
}
