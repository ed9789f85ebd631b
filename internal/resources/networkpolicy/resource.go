package networkpolicy

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ResourceType is the resource's type name.
const ResourceType = "agentsandbox_network_policy"

// Kind is the object this resource manages.
var Kind = object.Kind{
	GVR:          schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	Kind:         "NetworkPolicy",
	ResourceType: ResourceType,
}

// family is the resource for internal/object. Writes and deletions of a
// NetworkPolicy are immediate (no finalizers, no controller in the way);
// the time limits only matter on an unreachable or overloaded API server,
// where the retrying transport keeps trying. An update is a forced apply:
// fields another manager changed are taken back, which is how drift gets
// repaired.
var family = &object.Family[resourceModel]{
	Kind:     Kind,
	FastRead: true, // Refresh reads the live object, the state and the field manager only
	Schema:   resourceSchema,
	Timeouts: object.Timeouts{Create: 2 * time.Minute, Update: 2 * time.Minute, Delete: 2 * time.Minute},
	Build:    build,
	Refresh:  refresh,
	ConfigValidators: []resource.ConfigValidator{
		resourcevalidator.ExactlyOneOf(path.MatchRoot("template"), path.MatchRoot("pod_selector")),
	},
	ModifyPlan: modifyPlan,
}

// NewResource is registered in the provider.
func NewResource() resource.Resource { return object.NewResource(family) }

// modifyPlan renders the policy from the planned inputs, so that the plan
// carries the exact spec to be written. Refresh has put the live spec in
// the state, so any difference, from a configuration change or an
// out-of-band edit, is a visible diff of `rendered`.
func modifyPlan(ctx context.Context, _ *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan resourceModel
	resp.Diagnostics.Append(tfvalues.GetPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rendered := types.StringUnknown()
	p, known, diags := plan.expand(ctx)
	resp.Diagnostics.Append(diags...)
	if known {
		s, err := renderJSON(p.spec())
		if err != nil {
			resp.Diagnostics.AddError("Cannot render the network policy", err.Error())
			return
		}
		rendered = types.StringValue(s)
	}
	resp.Diagnostics.Append(tfvalues.SetPlanAttribute(ctx, &resp.Plan, path.Root("rendered"), rendered)...)

	if !plan.Template.IsNull() && !plan.Template.IsUnknown() && !plan.Name.IsUnknown() &&
		plan.Name.ValueString() == sandboxapi.TemplateNetworkPolicyName(plan.Template.ValueString()) {
		resp.Diagnostics.AddAttributeWarning(path.Root("name"), "Name of the controller's managed policy",
			fmt.Sprintf("%q is the name the agent-sandbox controller gives the NetworkPolicy it manages for template %q. "+
				"If that template's network policy management is Managed (the default), the controller owns this name and "+
				"creating the policy fails or fights with it. Choose another name, and set the template to Unmanaged so "+
				"that only this policy applies.", plan.Name.ValueString(), plan.Template.ValueString()))
	}
}

// build is the object the plan describes.
func build(ctx context.Context, plan *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	p, known, diags := plan.expand(ctx)
	if diags.HasError() {
		return nil, diags
	}
	if !known {
		// Terraform resolves every value before apply; reaching this is a bug.
		diags.AddError("Network policy not fully known", "Some attribute is still unknown at apply time. This is a bug in the provider; please report it.")
		return nil, diags
	}
	obj := Kind.New()
	diags.Append(plan.Expand(ctx, obj)...)
	spec, err := netrules.SpecContent(p.spec())
	if err != nil {
		diags.AddError("Cannot render the network policy", err.Error())
		return nil, diags
	}
	obj.Object["spec"] = spec
	return obj, diags
}

// refresh brings m in line with the live policy: identity and managed
// metadata, `rendered` from the live spec, and on import the input
// attributes decoded from it. After an import the state holds only the
// identity: neither selector attribute is set, which a configuration
// cannot produce.
func refresh(ctx context.Context, c object.Call, live *unstructured.Unstructured, m *resourceModel) diag.Diagnostics {
	importing := c.Op == object.OpRead && m.Template.IsNull() && m.PodSelector.IsNull()
	md, diags := object.Flatten(ctx, live, m.Metadata, c.Meta.FieldManager())
	m.Metadata = md
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	spec, err := liveSpec(live.Object)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read %s", ref), err.Error())
		return diags
	}
	rendered, err := renderJSON(spec)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read %s", ref), err.Error())
		return diags
	}
	m.Rendered = types.StringValue(rendered)
	if !importing {
		return diags
	}
	p, err := decode(spec, templateLookup(ctx, c.Meta, live.GetNamespace()))
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot import %s", ref),
			fmt.Sprintf("The policy cannot be expressed with %s: %s.\n\nManage it with another tool, or create the "+
				"isolation you want with this resource and delete the old policy.", ResourceType, err))
		return diags
	}
	diags.Append(m.setInputs(ctx, p)...)
	return diags
}

// templateLookup maps a template-ref-hash label value back to a
// SandboxTemplate name in namespace. The label holds only a hash, so this
// lists the namespace's templates, once, and only during import. Without
// the CRDs, or without permission to list, the policy is imported with an
// explicit pod_selector instead, which renders the same policy.
func templateLookup(ctx context.Context, meta *conn.Meta, namespace string) func(string) string {
	return func(hash string) string {
		c, diags := meta.Kube(ctx)
		if diags.HasError() {
			return ""
		}
		list, err := c.List(ctx, sandboxapi.SandboxTemplateGVR, namespace, "")
		if err != nil {
			tflog.Info(ctx, "cannot list SandboxTemplates to name the template the policy selects; importing its pod_selector instead",
				map[string]any{"namespace": namespace, "error": err.Error()})
			return ""
		}
		for _, t := range list.Items {
			if sandboxapi.NameHash(t.GetName()) == hash {
				return t.GetName()
			}
		}
		return ""
	}
}
