package warmpool

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_warm_pool"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          sandboxapi.SandboxWarmPoolGVR,
	Kind:         extv1beta1.SandboxWarmPoolKind,
	ResourceType: ResourceType,
}

// templateKind is what a pool refers to; it is only ever read.
var templateKind = object.Kind{
	GVR:          sandboxapi.SandboxTemplateGVR,
	Kind:         extv1beta1.SandboxTemplateKind,
	ResourceType: "agentsandbox_sandbox_template",
}

// replicasPath is spec.replicas, the field an autoscaler may own.
var replicasPath = []string{"spec", "replicas"}

// family is the resource for internal/object. Filling a pool means
// scheduling pods and, in real clusters, pulling images and maybe scaling
// nodes up: minutes, not seconds. An update is a forced apply (fields
// another manager changed are taken back, which is how drift gets
// repaired), but not exclusive: spec.replicas may belong to an autoscaler.
// Deletion is foreground: the pool goes only once its unclaimed sandboxes
// (and their pods) are gone, so that when destroy returns nothing of it is
// left running, e.g. before the node pool or the template is removed.
// Claimed sandboxes belong to their claims and are not touched.
var family = &object.Family[resourceModel]{
	Kind:          Kind,
	FastRead:      true, // Refresh reads the live object, the state and the field manager only
	Schema:        resourceSchema,
	Timeouts:      object.Timeouts{Create: 10 * time.Minute, Update: 10 * time.Minute, Delete: 5 * time.Minute},
	DeleteOptions: kube.DeleteOptions{Propagation: metav1.DeletePropagationForeground},
	Build: func(ctx context.Context, m *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
		return build(ctx, *m)
	},
	Refresh: func(ctx context.Context, c object.Call, live *unstructured.Unstructured, m *resourceModel) diag.Diagnostics {
		return flatten(ctx, live, m, c.Meta.FieldManager())
	},
	Check: check,
	Wait: func(ctx context.Context, c object.Call, live *unstructured.Unstructured, m, _ *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
		if !m.WaitForReady.ValueBool() {
			return nil, nil
		}
		return waitReady(ctx, c.Meta, live, c.Op.String())
	},
	ValidateConfig: validateConfig,
	ModifyPlan:     modifyPlan,
}

// NewResource is registered in the provider.
func NewResource() resource.Resource { return object.NewResource(family) }

// validateConfig refuses a replica count next to an external owner of it:
// the two would fight over spec.replicas.
func validateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var replicas types.Int64
	var external types.Bool
	resp.Diagnostics.Append(tfvalues.GetConfigAttribute(ctx, req.Config, "replicas", &replicas)...)
	resp.Diagnostics.Append(tfvalues.GetConfigAttribute(ctx, req.Config, "replicas_managed_externally", &external)...)
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

// modifyPlan fills in what the framework cannot know by itself:
//   - replicas: the API's default when not set and not managed externally
//     (so the plan shows the count that will run and an out-of-band scale is
//     drift); under an external owner it is left to what the framework
//     plans: the refreshed value when nothing changes, so an autoscaler's
//     scaling never shows, and unknown when the pool is updated, because the
//     autoscaler may scale between plan and apply;
//   - selector: derived from the pool's name, so it is known while planning.
func modifyPlan(ctx context.Context, _ *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan, config resourceModel
	resp.Diagnostics.Append(tfvalues.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfvalues.GetConfig(ctx, req.Config, &config)...)
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
	resp.Diagnostics.Append(tfvalues.SetPlanAttribute(ctx, &resp.Plan, path.Root("replicas"), plan.Replicas)...)
	resp.Diagnostics.Append(tfvalues.SetPlanAttribute(ctx, &resp.Plan, path.Root("selector"), plan.Selector)...)
	// The template is not looked up while planning: it is usually created
	// in the same apply, which a plan cannot tell from a mistyped name (see
	// object.Lookup). It is checked, as an error, just before the write
	// (check).
}

// check runs before the pool is written. The template must exist (on
// create, and when the reference changes). And when spec.replicas passes
// to an external owner, the provider first releases it: the apply leaves
// spec.replicas out, and if the provider owned it, the server would delete
// it and the pool would fall back to one sandbox.
func check(ctx context.Context, c object.Call, plan, state *resourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if state == nil || !plan.Template.Equal(state.Template) {
		diags.Append(checkTemplate(ctx, c.Meta, *plan)...)
	}
	if diags.HasError() || state == nil || !plan.external() || state.external() {
		return diags
	}
	live, found, d := Kind.Read(ctx, c.Meta, state.Namespace.ValueString(), state.Name.ValueString())
	diags.Append(d...)
	if found {
		diags.Append(Kind.ReleaseFields(ctx, c.Meta, live, replicasPath)...)
	}
	return diags
}

// checkTemplate makes sure the template the pool names exists. Without it
// the controller creates nothing and the pool has no condition to say so:
// the apply would only time out. One GET, only when the reference is new.
func checkTemplate(ctx context.Context, meta *conn.Meta, plan resourceModel) diag.Diagnostics {
	ns, name := plan.Namespace.ValueString(), plan.Template.ValueString()
	_, found, diags := templateKind.Read(ctx, meta, ns, name)
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
