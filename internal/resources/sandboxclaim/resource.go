package sandboxclaim

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_sandbox_claim"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          sandboxapi.SandboxClaimGVR,
	Kind:         extv1beta1.SandboxClaimKind,
	ResourceType: ResourceType,
}

// privateApplied is the private-state key of the last applied pool and
// variables (see package doc).
const privateApplied = "applied"

// family is the resource for internal/object. A warm adoption takes well
// under a second; a cold start (no ready warm sandbox, or env set)
// schedules a pod and maybe pulls an image. The configuration declares the
// whole spec: a forced apply takes back what others changed, and the
// exclusive apply also removes what they added (a shutdown time, pod
// labels), so the plan's repair really happens. Deletion is foreground:
// the claim goes only once its sandbox (and pod) is gone, so nothing of
// the session is left running when destroy returns.
var family = &object.Family[resourceModel]{
	Kind:          Kind,
	Schema:        resourceSchema,
	Timeouts:      object.Timeouts{Create: 5 * time.Minute, Update: 5 * time.Minute, Delete: 5 * time.Minute},
	Exclusive:     []string{"spec"},
	DeleteOptions: kube.DeleteOptions{Propagation: metav1.DeletePropagationForeground},
	Build: func(ctx context.Context, m *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
		return build(ctx, *m)
	},
	Refresh: func(ctx context.Context, c object.Call, live *unstructured.Unstructured, m *resourceModel) diag.Diagnostics {
		// A Read that finds the claim gone (also what a Delete or
		// DeleteForeground shutdown policy leads to) has removed it from
		// the state before this.
		return flatten(ctx, live, m, c.Meta.FieldManager())
	},
	// Before an update writes the claim: see clearPodMetadata.
	Check: func(ctx context.Context, c object.Call, plan, state *resourceModel) diag.Diagnostics {
		if state == nil {
			return nil
		}
		return clearPodMetadata(ctx, c, plan, state)
	},
	Unchanged: unchanged,
	Record: func(ctx context.Context, plan *resourceModel, private object.PrivateState) diag.Diagnostics {
		return writeApplied(ctx, private, *plan)
	},
	Wait:           wait,
	ValidateConfig: validateConfig,
	ModifyPlan:     modifyPlan,
}

// NewResource is registered in the provider.
func NewResource() resource.Resource { return object.NewResource(family) }

// unchanged: nothing the claim holds changes (only `timeouts` or
// `wait_for_ready`). The claim is then not written at all, so its
// generation stays and the controller has nothing to do.
func unchanged(ctx context.Context, plan, state *resourceModel) bool {
	obj, d1 := build(ctx, *plan)
	prior, d2 := build(ctx, *state)
	return !d1.HasError() && !d2.HasError() && equality.Semantic.DeepEqual(obj.Object, prior.Object)
}

// clearPodMetadata removes the claim's pod labels and annotations with a
// merge patch when the configuration drops all of them. A server-side apply
// cannot: the controller co-owns the emptied `additionalPodMetadata` (its
// adoption Update wrote it, extensions/controllers/sandboxclaim_controller.go:1142
// at v0.5.6), so the object stays, and server-side apply turns an object it
// empties into null, which the CRD refuses (kubernetes/kubernetes#135841).
// Deleting the two fields outright leaves `{}`, and the apply that follows
// has nothing left to remove. One request, only on that change.
func clearPodMetadata(ctx context.Context, c object.Call, plan, state *resourceModel) diag.Diagnostics {
	obj, diags := build(ctx, *plan)
	prior, d := build(ctx, *state)
	if diags.Append(d...); diags.HasError() {
		return diags
	}
	planned, _, _ := unstructured.NestedMap(obj.Object, "spec", "additionalPodMetadata")
	before, _, _ := unstructured.NestedMap(prior.Object, "spec", "additionalPodMetadata")
	if len(planned) > 0 || len(before) == 0 {
		return nil
	}
	client, diags := c.Meta.Kube(ctx)
	if diags.HasError() {
		return diags
	}
	patch := map[string]any{"spec": map[string]any{"additionalPodMetadata": map[string]any{"labels": nil, "annotations": nil}}}
	ref := Kind.Ref(obj.GetNamespace(), obj.GetName())
	if err := client.MergePatch(ctx, Kind.GVR, ref.Namespace, ref.Name, patch, c.Meta.FieldManager()); err != nil && !kube.IsNotFound(err) {
		diags.Append(kube.Diagnostics(err, "patch", ref)...)
	}
	return diags
}

// wait waits for the claim if the plan asks for it. What the claim's pod
// metadata must have done to its sandbox comes from the object written
// and the one it replaced (state is nil on create).
func wait(ctx context.Context, c object.Call, live *unstructured.Unstructured, plan, state *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	if !plan.WaitForReady.ValueBool() {
		return nil, nil
	}
	obj, diags := build(ctx, *plan)
	if diags.HasError() {
		return nil, diags
	}
	var prior *unstructured.Unstructured
	if state != nil {
		if prior, diags = build(ctx, *state); diags.HasError() {
			return nil, diags
		}
	}
	return waitReady(ctx, c.Meta, live, wantPodMetadata(obj, prior))
}

// validateConfig checks across attributes what the attribute validators
// cannot: volume claim template names are unique (each names a PVC and a
// pod volume).
func validateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var vcts types.List
	resp.Diagnostics.Append(tfvalues.GetConfigAttribute(ctx, req.Config, "volume_claim_templates", &vcts)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(blueprint.ValidateVolumeClaimTemplates(ctx, path.Root("volume_claim_templates"), vcts)...)
}

// modifyPlan decides replacement and keeps the sandbox's name and service
// FQDN known, and
// checks new pod labels against the controller's allowed label domains
// (checkLabelDomains).
//
// warm_pool and env replace the claim when the configuration changes them,
// that is when the plan differs from what was last applied (kept in the
// private state). When only the live object differs (someone edited it),
// the plan is an in-place update that puts the applied values back: the
// claim's sandbox is not affected by either edit, so replacing it would
// throw a working sandbox away to repair nothing. After an import there is
// no record, and the refreshed state stands in for it.
func modifyPlan(ctx context.Context, meta *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		// A new claim cannot expire before it starts (as a new sandbox).
		var shutdown types.String
		resp.Diagnostics.Append(tfvalues.GetPlanAttribute(ctx, req.Plan, "shutdown_time", &shutdown)...)
		resp.Diagnostics.Append(blueprint.RefusePastShutdownTime(shutdown, "claim", time.Now())...)
		var pm types.Object
		resp.Diagnostics.Append(tfvalues.GetPlanAttribute(ctx, req.Plan, "additional_pod_metadata", &pm)...)
		resp.Diagnostics.Append(checkLabelDomains(ctx, meta, pm, types.ObjectNull(pm.AttributeTypes(ctx)))...)
		return
	}
	var plan, state resourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(checkLabelDomains(ctx, meta, plan.AdditionalPodMetadata, state.AdditionalPodMetadata)...)
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
	// The controller gives the volumes to the sandbox it creates for the
	// claim and never changes a sandbox's volume claim templates
	// afterwards (immutable on the Sandbox from v0.5.3,
	// api/v1beta1/sandbox_types.go:192), so a change replaces the claim.
	if knownDeep(plan.VolumeClaimTemplates) {
		if want, d := appliedOf(ctx, plan); !d.HasError() && want.Volumes != last.Volumes {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("volume_claim_templates"))
			replace = true
		}
	} else {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("volume_claim_templates"))
	}
	// An in-place update keeps the sandbox, and so its name and its
	// Service's DNS name: nothing the update writes makes the controller
	// bind another sandbox or change the sandbox's Service. A value not
	// reported yet stays unknown (v1.0.1+ report the FQDN once the Service
	// exists, which may be after the name is bound; v0.5.x never do), so
	// whatever the apply reads is consistent with the plan.
	if !replace && !state.SandboxName.IsNull() && state.SandboxName.ValueString() != "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("sandbox_name"), state.SandboxName)...)
		if !state.ServiceFQDN.IsNull() && !state.ServiceFQDN.IsUnknown() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("service_fqdn"), state.ServiceFQDN)...)
		}
	}
}

// envKnown says whether every value inside env is known.
func envKnown(l types.List) bool { return knownDeep(l) }

// knownDeep says whether every value inside a list of objects is known, at
// any depth.
func knownDeep(l types.List) bool { return valueKnown(l) }

func valueKnown(v attr.Value) bool {
	if v.IsUnknown() {
		return false
	}
	var inner []attr.Value
	switch x := v.(type) {
	case types.List:
		inner = x.Elements()
	case types.Set:
		inner = x.Elements()
	case types.Map:
		for _, e := range x.Elements() {
			inner = append(inner, e)
		}
	case types.Object:
		for _, e := range x.Attributes() {
			inner = append(inner, e)
		}
	}
	for _, e := range inner {
		if !valueKnown(e) {
			return false
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
