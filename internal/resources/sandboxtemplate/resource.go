package sandboxtemplate

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_sandbox_template"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          sandboxapi.SandboxTemplateGVR,
	Kind:         extv1beta1.SandboxTemplateKind,
	ResourceType: ResourceType,
}

// family is the resource for internal/object. A template has no status
// and no finalizers: writes and deletions are immediate, and the time
// limits only matter against a slow or unreachable API server, where the
// retrying transport keeps trying. The resource declares the whole spec:
// anything another field manager adds below it (a container, an env
// variable, a toleration) is drift, shown by the plan and removed by the
// apply.
var family = &object.Family[resourceModel]{
	Kind:      Kind,
	FastRead:  true, // Refresh reads the live object, the state and the field manager only
	Schema:    resourceSchema,
	Timeouts:  object.Timeouts{Create: 2 * time.Minute, Update: 2 * time.Minute, Delete: 2 * time.Minute},
	Exclusive: []string{"spec"},
	Build: func(ctx context.Context, m *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
		return m.build(ctx)
	},
	Refresh:        refresh,
	ValidateConfig: validateConfig,
	ModifyPlan:     modifyPlan,
}

// NewResource is registered in the provider.
func NewResource() resource.Resource { return object.NewResource(family) }

// refresh brings m in line with the live template. After an import the
// state holds only the identity (pod_template is required, so no
// configuration leaves it null): network_policy is then decoded from the
// live rules too.
func refresh(ctx context.Context, c object.Call, live *unstructured.Unstructured, m *resourceModel) diag.Diagnostics {
	importing := c.Op == object.OpRead && m.PodTemplate.IsNull()
	return m.refresh(ctx, live, c.Meta.FieldManager(), importing)
}

// validateConfig runs the checks across attributes: the pod template's
// (with the claim template names, which a volume mount may name), unique
// claim template names, and a warning for rules the controller ignores.
func validateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m resourceModel
	resp.Diagnostics.Append(tfvalues.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	names, known := blueprint.ClaimTemplateNames(ctx, m.VolumeClaimTemplates)
	opts := podtemplate.Options{ClaimTemplateNames: names, SkipVolumeMountCheck: !known}
	// A claim may bring claim templates of its own when the policy lets it,
	// and its sandbox's pod may then mount names the template cannot know.
	if p := m.VolumeClaimTemplatesPolicy.ValueString(); m.VolumeClaimTemplatesPolicy.IsUnknown() ||
		p == string(extv1beta1.VolumeClaimTemplatesPolicyAllowed) || p == string(extv1beta1.VolumeClaimTemplatesPolicyOverrides) {
		opts.SkipVolumeMountCheck = true
	}
	resp.Diagnostics.Append(podtemplate.Validate(ctx, path.Root("pod_template"), m.PodTemplate, opts)...)
	resp.Diagnostics.Append(blueprint.ValidateVolumeClaimTemplates(ctx, path.Root("volume_claim_templates"), m.VolumeClaimTemplates)...)

	if !m.NetworkPolicy.IsNull() && m.NetworkPolicyManagement.ValueString() == string(extv1beta1.NetworkPolicyManagementUnmanaged) {
		resp.Diagnostics.AddAttributeWarning(path.Root("network_policy"), "Network policy rules without effect",
			"network_policy_management is \"Unmanaged\", so the controller creates no NetworkPolicy and ignores these "+
				"rules. Remove network_policy, or set network_policy_management = \"Managed\" to have them enforced.")
	}
	checkSandboxd(ctx, m, &resp.Diagnostics)
}

// modifyPlan renders the network policy rules from the planned inputs, so
// the plan carries the exact rules to be written; refresh has put the live
// rules in the state, so an out-of-band edit is a visible diff.
func modifyPlan(ctx context.Context, meta *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var np types.Object
	resp.Diagnostics.Append(tfvalues.GetPlanAttribute(ctx, req.Plan, "network_policy", &np)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rendered, diags := renderedRules(ctx, np)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(tfvalues.SetPlanAttribute(ctx, &resp.Plan, path.Root("network_policy_rendered"), rendered)...)

	// Both checks look only at what is new or changed: an unchanged pod
	// template (every plan of an existing template that does not touch it)
	// is not even converted.
	if !req.State.Raw.IsNull() && tfvalues.RawAttributeEqual(req.Plan.Raw, req.State.Raw, "pod_template") {
		return
	}
	var pt, prior types.Object
	resp.Diagnostics.Append(tfvalues.GetPlanAttribute(ctx, req.Plan, "pod_template", &pt)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(tfvalues.GetStateAttribute(ctx, req.State, "pod_template", &prior)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(podtemplate.CheckServedOverrides(ctx, meta, sandboxapi.SandboxTemplateCRDName,
		extv1beta1.GroupVersion.Version, path.Root("pod_template"), pt, prior)...)
	resp.Diagnostics.Append(podtemplate.CheckRuntimeClass(ctx, meta, "sandbox template", path.Root("pod_template"), pt, prior)...)
}
