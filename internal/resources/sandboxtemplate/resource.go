package sandboxtemplate

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/schematypes"
)

var (
	_ resource.Resource                   = (*templateResource)(nil)
	_ resource.ResourceWithConfigure      = (*templateResource)(nil)
	_ resource.ResourceWithImportState    = (*templateResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*templateResource)(nil)
	_ resource.ResourceWithValidateConfig = (*templateResource)(nil)
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_sandbox_template"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          extv1beta1.SandboxTemplateGVR,
	Kind:         extv1beta1.SandboxTemplateKind,
	ResourceType: ResourceType,
}

// specPaths is what the resource declares in full: anything another field
// manager adds below it (a container, an env variable, a toleration) is
// drift, shown by the plan and removed by the apply.
var specPaths = []string{"spec"}

// A template has no status and no finalizers: writes and deletions are
// immediate. The bounds only matter against a slow or unreachable API
// server, where the retrying transport keeps trying.
const (
	defaultCreateTimeout = 2 * time.Minute
	defaultUpdateTimeout = 2 * time.Minute
	defaultDeleteTimeout = 2 * time.Minute
)

// NewResource is registered in the provider.
func NewResource() resource.Resource { return &templateResource{} }

type templateResource struct {
	meta *conn.Meta
}

func (r *templateResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_template"
}

func (r *templateResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schematypes.Resource(resourceSchema(ctx))
}

func (r *templateResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	r.meta = meta
}

// ValidateConfig runs the checks across attributes: the pod template's
// (with the claim template names, which a volume mount may name), unique
// claim template names, and a warning for rules the controller ignores.
func (r *templateResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m resourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	names, known := blueprint.ClaimTemplateNames(ctx, m.VolumeClaimTemplates)
	opts := podtemplate.Options{ClaimTemplateNames: names, SkipVolumeMountCheck: !known}
	// A claim may bring claim templates of its own when the policy lets it,
	// and its sandbox's pod may then mount names the template cannot know.
	if p := m.VolumeClaimTemplatesPolicy.ValueString(); m.VolumeClaimTemplatesPolicy.IsUnknown() ||
		p == string(extv1beta1.VolumeClaimTemplatesAllowed) || p == string(extv1beta1.VolumeClaimTemplatesOverrides) {
		opts.SkipVolumeMountCheck = true
	}
	resp.Diagnostics.Append(podtemplate.Validate(ctx, path.Root("pod_template"), m.PodTemplate, opts)...)
	resp.Diagnostics.Append(blueprint.ValidateVolumeClaimTemplates(ctx, path.Root("volume_claim_templates"), m.VolumeClaimTemplates)...)

	if !m.NetworkPolicy.IsNull() && m.NetworkPolicyManagement.ValueString() == string(extv1beta1.NetworkPolicyUnmanaged) {
		resp.Diagnostics.AddAttributeWarning(path.Root("network_policy"), "Network policy rules without effect",
			"network_policy_management is \"Unmanaged\", so the controller creates no NetworkPolicy and ignores these "+
				"rules. Remove network_policy, or set network_policy_management = \"Managed\" to have them enforced.")
	}
}

// ModifyPlan renders the network policy rules from the planned inputs, so
// the plan carries the exact rules to be written; refresh has put the live
// rules in the state, so an out-of-band edit is a visible diff.
func (r *templateResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var np types.Object
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("network_policy"), &np)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rendered, diags := renderedRules(ctx, np)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("network_policy_rendered"), rendered)...)
}

func (r *templateResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	obj, diags := plan.build(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	live, diags := Kind.Create(ctx, r.meta, obj)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(plan.refresh(ctx, live, r.meta.FieldManager(), false)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *templateResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state resourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	live, found, diags := Kind.Read(ctx, r.meta, state.Namespace.ValueString(), state.Name.ValueString())
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		tflog.Info(ctx, "sandbox template is gone; removing it from the state", map[string]any{
			"namespace": state.Namespace.ValueString(), "name": state.Name.ValueString(),
		})
		resp.State.RemoveResource(ctx)
		return
	}
	// After an import the state holds only the identity; pod_template is
	// required, so no configuration leaves it null.
	importing := state.PodTemplate.IsNull()
	resp.Diagnostics.Append(state.refresh(ctx, live, r.meta.FieldManager(), importing)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *templateResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	obj, diags := plan.build(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Forced, and exclusive below spec: fields another manager changed are
	// taken back and fields another manager added are removed, which is how
	// drift gets repaired.
	live, diags := Kind.ApplyExclusive(ctx, r.meta, obj, specPaths...)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(plan.refresh(ctx, live, r.meta.FieldManager(), false)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *templateResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state resourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp.Diagnostics.Append(Kind.Delete(ctx, r.meta, state.Namespace.ValueString(), state.Name.ValueString(), kube.DeleteOptions{})...)
}

// ImportState takes `<namespace>/<name>` (or `<name>` in the default
// namespace); Read then fills in everything else from the live template.
func (r *templateResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	object.ImportState(ctx, req, resp)
}
