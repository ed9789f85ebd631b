package warmpool

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/schematypes"
)

var (
	_ resource.Resource                   = (*warmPoolResource)(nil)
	_ resource.ResourceWithConfigure      = (*warmPoolResource)(nil)
	_ resource.ResourceWithImportState    = (*warmPoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*warmPoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*warmPoolResource)(nil)
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_warm_pool"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          extv1beta1.SandboxWarmPoolGVR,
	Kind:         extv1beta1.SandboxWarmPoolKind,
	ResourceType: ResourceType,
}

// templateKind is what a pool refers to; it is only ever read.
var templateKind = object.Kind{
	GVR:          extv1beta1.SandboxTemplateGVR,
	Kind:         extv1beta1.SandboxTemplateKind,
	ResourceType: "agentsandbox_sandbox_template",
}

// Filling a pool means scheduling pods and, in real clusters, pulling
// images and maybe scaling nodes up: minutes, not seconds. Deletion waits
// for the pool's sandboxes too (foreground), which is quick.
const (
	defaultCreateTimeout = 10 * time.Minute
	defaultUpdateTimeout = 10 * time.Minute
	defaultDeleteTimeout = 5 * time.Minute
)

// replicasPath is spec.replicas, the field an autoscaler may own.
var replicasPath = []string{"spec", "replicas"}

// NewResource is registered in the provider.
func NewResource() resource.Resource { return &warmPoolResource{} }

type warmPoolResource struct {
	meta *conn.Meta
}

func (r *warmPoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_warm_pool"
}

func (r *warmPoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schematypes.Resource(resourceSchema(ctx))
}

func (r *warmPoolResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	r.meta = meta
}

// ValidateConfig refuses a replica count next to an external owner of it:
// the two would fight over spec.replicas.
func (r *warmPoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var replicas types.Int64
	var external types.Bool
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("replicas"), &replicas)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("replicas_managed_externally"), &external)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !replicas.IsNull() && external.ValueBool() {
		shown := "(known after apply)"
		if !replicas.IsUnknown() {
			shown = fmt.Sprint(replicas.ValueInt64())
		}
		resp.Diagnostics.AddAttributeError(path.Root("replicas"), "Replicas set while managed externally",
			fmt.Sprintf("replicas = %s is set, but replicas_managed_externally = true leaves spec.replicas to another "+
				"controller (such as a HorizontalPodAutoscaler), so the provider would never apply it. Remove replicas "+
				"(it then reports the current count), or set replicas_managed_externally = false to manage the count here.", shown))
	}
}

// ModifyPlan fills in what the framework cannot know by itself:
//   - replicas: the API's default when not set and not managed externally
//     (so the plan shows the count that will run and an out-of-band scale is
//     drift); under an external owner it is left to what the framework
//     plans: the refreshed value when nothing changes, so an autoscaler's
//     scaling never shows, and unknown when the pool is updated, because the
//     autoscaler may scale between plan and apply;
//   - selector: derived from the pool's name, so it is known while planning.
func (r *warmPoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan, config resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// ValidateConfig cannot judge an owner not known while validating; by
	// the time the plan is final (during apply) it is known.
	if !config.Replicas.IsNull() && !plan.ReplicasManagedExternally.IsUnknown() && plan.ReplicasManagedExternally.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("replicas"), "Replicas set while managed externally",
			"replicas is set, but replicas_managed_externally turned out to be true, which leaves spec.replicas to another "+
				"controller. Remove replicas, or make replicas_managed_externally false.")
		return
	}
	if config.Replicas.IsNull() {
		switch {
		case plan.ReplicasManagedExternally.IsUnknown():
			plan.Replicas = types.Int64Unknown()
		case !plan.ReplicasManagedExternally.ValueBool():
			plan.Replicas = types.Int64Value(defaultReplicas)
		}
	}
	if plan.Name.IsUnknown() {
		plan.Selector = types.StringUnknown()
	} else {
		plan.Selector = types.StringValue(sandboxapi.WarmPoolSelector(plan.Name.ValueString()))
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("replicas"), plan.Replicas)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("selector"), plan.Selector)...)
}

func (r *warmPoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
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

	obj, diags := build(ctx, plan)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(r.checkTemplate(ctx, plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	live, diags := Kind.Create(ctx, r.meta, obj)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.finish(ctx, live, &plan, "create", &resp.State, &resp.Diagnostics)
}

func (r *warmPoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
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
		tflog.Info(ctx, "warm pool is gone; removing it from the state", map[string]any{
			"namespace": state.Namespace.ValueString(), "name": state.Name.ValueString(),
		})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(flatten(ctx, live, &state, r.meta.FieldManager())...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *warmPoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
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

	obj, diags := build(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if !plan.Template.Equal(state.Template) {
		resp.Diagnostics.Append(r.checkTemplate(ctx, plan)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.external() && !state.external() {
		// The apply below leaves spec.replicas out; if the provider owned it,
		// the server would delete it and the pool would fall back to one
		// sandbox. Hand it over first, so the current count stays.
		live, found, diags := Kind.Read(ctx, r.meta, state.Namespace.ValueString(), state.Name.ValueString())
		resp.Diagnostics.Append(diags...)
		if found {
			resp.Diagnostics.Append(Kind.ReleaseFields(ctx, r.meta, live, replicasPath)...)
		}
		if resp.Diagnostics.HasError() {
			return
		}
	}
	// A forced apply: fields another manager changed are taken back, which
	// is how drift gets repaired.
	live, diags := Kind.Apply(ctx, r.meta, obj)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.finish(ctx, live, &plan, "update", &resp.State, &resp.Diagnostics)
}

// finish waits for the pool if asked to and stores it. The state is stored
// even when the wait fails: the pool exists, and Terraform must know it
// (after a failed create it is tainted and replaced by the next apply).
func (r *warmPoolResource) finish(ctx context.Context, live *unstructured.Unstructured, m *resourceModel, what string, state stateSetter, out *diag.Diagnostics) {
	var waitDiags diag.Diagnostics
	if m.WaitForReady.ValueBool() {
		live, waitDiags = waitReady(ctx, r.meta, live, what)
	}
	out.Append(flatten(ctx, live, m, r.meta.FieldManager())...)
	out.Append(state.Set(ctx, m)...)
	out.Append(waitDiags...)
}

// stateSetter is the part of tfsdk.State that finish needs.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

func (r *warmPoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
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
	// Foreground: the pool goes only once its unclaimed sandboxes (and their
	// pods) are gone, so that when destroy returns nothing of it is left
	// running, e.g. before the node pool or the template is removed.
	// Claimed sandboxes belong to their claims and are not touched.
	resp.Diagnostics.Append(Kind.Delete(ctx, r.meta, state.Namespace.ValueString(), state.Name.ValueString(),
		kube.DeleteOptions{Propagation: metav1.DeletePropagationForeground})...)
}

// ImportState takes `<namespace>/<name>` (or `<name>` in the default
// namespace); Read then fills in everything else from the live pool.
func (r *warmPoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	object.ImportState(ctx, req, resp)
}

// checkTemplate makes sure the template the pool names exists. Without it
// the controller creates nothing and the pool has no condition to say so:
// the apply would only time out. One GET, only when the reference is new.
func (r *warmPoolResource) checkTemplate(ctx context.Context, plan resourceModel) diag.Diagnostics {
	ns, name := plan.Namespace.ValueString(), plan.Template.ValueString()
	_, found, diags := templateKind.Read(ctx, r.meta, ns, name)
	if diags.HasError() || found {
		return diags
	}
	diags.AddAttributeError(path.Root("template"), "Sandbox template not found",
		fmt.Sprintf("The warm pool %q refers to template = %q, but there is no SandboxTemplate %q in namespace %q, so "+
			"the controller could not create any sandbox for it. Create the template first: with an "+
			"agentsandbox_sandbox_template resource, set template = agentsandbox_sandbox_template.<name>.name so that "+
			"Terraform creates it before the pool.", plan.Name.ValueString(), name, name, ns))
	return diags
}
