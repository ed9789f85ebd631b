package sandboxclaim

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/schematypes"
)

var (
	_ resource.Resource                = (*claimResource)(nil)
	_ resource.ResourceWithConfigure   = (*claimResource)(nil)
	_ resource.ResourceWithImportState = (*claimResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*claimResource)(nil)
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_sandbox_claim"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          extv1beta1.SandboxClaimGVR,
	Kind:         extv1beta1.SandboxClaimKind,
	ResourceType: ResourceType,
}

// A warm adoption takes well under a second; a cold start (no ready warm
// sandbox, or env set) schedules a pod and maybe pulls an image.
const (
	defaultCreateTimeout = 5 * time.Minute
	defaultUpdateTimeout = 5 * time.Minute
	defaultDeleteTimeout = 5 * time.Minute
)

// privateApplied is the private-state key of the last applied pool and
// variables (see package doc).
const privateApplied = "applied"

// NewResource is registered in the provider.
func NewResource() resource.Resource { return &claimResource{} }

type claimResource struct {
	meta *conn.Meta
}

func (r *claimResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_claim"
}

func (r *claimResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schematypes.Resource(resourceSchema(ctx))
}

func (r *claimResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	r.meta = meta
}

// ModifyPlan decides replacement and keeps the sandbox's name known.
//
// warm_pool and env replace the claim when the configuration changes them,
// that is when the plan differs from what was last applied (kept in the
// private state). When only the live object differs (someone edited it),
// the plan is an in-place update that puts the applied values back: the
// claim's sandbox is not affected by either edit, so replacing it would
// throw a working sandbox away to repair nothing. After an import there is
// no record, and the refreshed state stands in for it.
func (r *claimResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if req.State.Raw.IsNull() {
		// A new claim cannot expire before it starts (as a new sandbox).
		var shutdown types.String
		resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("shutdown_time"), &shutdown)...)
		resp.Diagnostics.Append(blueprint.RefusePastShutdownTime(shutdown, "claim", time.Now())...)
		return
	}
	var plan, state resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	last, found, diags := readApplied(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if !found {
		last, diags = appliedOf(ctx, state)
		resp.Diagnostics.Append(diags...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	replace := false
	if !plan.WarmPool.IsUnknown() && plan.WarmPool.ValueString() != last.WarmPool {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("warm_pool"))
		replace = true
	}
	if envKnown(plan.Env) {
		if want, d := appliedOf(ctx, plan); !d.HasError() && want.Env != last.Env {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("env"))
			replace = true
		}
	} else {
		// Not known yet: it may change, and then the claim is replaced.
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("env"))
	}
	// An in-place update keeps the sandbox, and so its name.
	if !replace && !state.SandboxName.IsNull() && state.SandboxName.ValueString() != "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("sandbox_name"), state.SandboxName)...)
	}
}

// envKnown says whether every value inside env is known.
func envKnown(l types.List) bool {
	if l.IsUnknown() {
		return false
	}
	for _, e := range l.Elements() {
		if e.IsUnknown() {
			return false
		}
		if o, ok := e.(types.Object); ok {
			for _, a := range o.Attributes() {
				if a.IsUnknown() {
					return false
				}
			}
		}
	}
	return true
}

// privateState is the part of the framework's private state both the
// request (read) and the response (write) offer.
type privateState interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateWriter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

func readApplied(ctx context.Context, p privateState) (applied, bool, diag.Diagnostics) {
	var a applied
	if p == nil {
		return a, false, nil
	}
	raw, diags := p.GetKey(ctx, privateApplied)
	if diags.HasError() || len(raw) == 0 {
		return a, false, diags
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, false, nil // unreadable: behave as after an import
	}
	return a, true, diags
}

func writeApplied(ctx context.Context, p privateWriter, m resourceModel) diag.Diagnostics {
	a, diags := appliedOf(ctx, m)
	if diags.HasError() {
		return diags
	}
	raw, err := json.Marshal(a)
	if err != nil {
		diags.AddError("Cannot record the applied claim", err.Error())
		return diags
	}
	return p.SetKey(ctx, privateApplied, raw)
}

func (r *claimResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
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
	if resp.Diagnostics.HasError() {
		return
	}
	live, diags := Kind.Create(ctx, r.meta, obj)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(writeApplied(ctx, resp.Private, plan)...)
	r.finish(ctx, live, &plan, wantPodMetadata(obj, nil), &resp.State, &resp.Diagnostics)
}

func (r *claimResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
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
		// Also what a Delete or DeleteForeground shutdown policy leads to.
		tflog.Info(ctx, "sandbox claim is gone; removing it from the state", map[string]any{
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

func (r *claimResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
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

	var state resourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	obj, diags := build(ctx, plan)
	resp.Diagnostics.Append(diags...)
	prior, diags := build(ctx, state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var live *unstructured.Unstructured
	if equality.Semantic.DeepEqual(obj.Object, prior.Object) {
		// Nothing the claim holds changes (only `timeouts` or
		// `wait_for_ready`): the claim is not written at all, so its
		// generation stays and the controller has nothing to do. The state
		// is refreshed from one GET.
		tflog.Debug(ctx, "no change to the sandbox claim itself; not writing it", map[string]any{"claim": Kind.Ref(state.Namespace.ValueString(), state.Name.ValueString()).String()})
		var found bool
		live, found, diags = Kind.Read(ctx, r.meta, state.Namespace.ValueString(), state.Name.ValueString())
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		if !found {
			resp.Diagnostics.AddError("Sandbox claim disappeared",
				fmt.Sprintf("%s was deleted while Terraform updated it. Apply again to create it anew.", Kind.Ref(state.Namespace.ValueString(), state.Name.ValueString())))
			return
		}
	} else {
		// The configuration declares the whole spec: a forced apply takes back
		// what others changed, and ApplyExclusive also removes what they added
		// (a shutdown time, pod labels), so the plan's repair really happens.
		live, diags = Kind.ApplyExclusive(ctx, r.meta, obj, "spec")
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	resp.Diagnostics.Append(writeApplied(ctx, resp.Private, plan)...)
	r.finish(ctx, live, &plan, wantPodMetadata(obj, prior), &resp.State, &resp.Diagnostics)
}

// wantPodMetadata is what the claim's pod metadata must have done to its
// sandbox once the controller acted on obj, which replaced prior (nil on
// create): see forwardedIsCurrent.
func wantPodMetadata(obj, prior *unstructured.Unstructured) podMetadataWant {
	var w podMetadataWant
	w.labels, _, _ = unstructured.NestedStringMap(obj.Object, "spec", "additionalPodMetadata", "labels")
	w.annotations, _, _ = unstructured.NestedStringMap(obj.Object, "spec", "additionalPodMetadata", "annotations")
	if prior == nil {
		return w
	}
	oldLabels, _, _ := unstructured.NestedStringMap(prior.Object, "spec", "additionalPodMetadata", "labels")
	oldAnnotations, _, _ := unstructured.NestedStringMap(prior.Object, "spec", "additionalPodMetadata", "annotations")
	for k := range oldLabels {
		if _, ok := w.labels[k]; !ok {
			w.removedLabels = append(w.removedLabels, k)
		}
	}
	for k := range oldAnnotations {
		if _, ok := w.annotations[k]; !ok {
			w.removedAnnotations = append(w.removedAnnotations, k)
		}
	}
	sort.Strings(w.removedLabels)
	sort.Strings(w.removedAnnotations)
	return w
}

// finish waits for the claim if asked to and stores it. The state is
// stored even when the wait fails: the claim exists, and Terraform must
// know it (after a failed create it is tainted and replaced by the next
// apply).
func (r *claimResource) finish(ctx context.Context, live *unstructured.Unstructured, m *resourceModel, want podMetadataWant, state interface {
	Set(context.Context, any) diag.Diagnostics
}, out *diag.Diagnostics) {
	var waitDiags diag.Diagnostics
	if m.WaitForReady.ValueBool() {
		live, waitDiags = waitReady(ctx, r.meta, live, want)
	}
	out.Append(flatten(ctx, live, m, r.meta.FieldManager())...)
	out.Append(state.Set(ctx, m)...)
	out.Append(waitDiags...)
}

func (r *claimResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
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
	// Foreground: the claim goes only once its sandbox (and pod) is gone,
	// so nothing of the session is left running when destroy returns.
	resp.Diagnostics.Append(Kind.Delete(ctx, r.meta, state.Namespace.ValueString(), state.Name.ValueString(),
		kube.DeleteOptions{Propagation: metav1.DeletePropagationForeground})...)
}

// ImportState takes `<namespace>/<name>` (or `<name>` in the default
// namespace); Read then fills in everything else from the live claim.
func (r *claimResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	object.ImportState(ctx, req, resp)
}
