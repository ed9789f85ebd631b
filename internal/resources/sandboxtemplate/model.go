package sandboxtemplate

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// resourceModel is the resource's state and plan.
type resourceModel struct {
	object.Metadata
	templateModel
	NetworkPolicy types.Object   `tfsdk:"network_policy"`
	Timeouts      timeouts.Value `tfsdk:"timeouts"`
}

// templateModel is what the resource and the data source both show of a
// template.
type templateModel struct {
	PodTemplate                types.Object `tfsdk:"pod_template"`
	VolumeClaimTemplates       types.List   `tfsdk:"volume_claim_templates"`
	Service                    types.Bool   `tfsdk:"service"`
	NetworkPolicyManagement    types.String `tfsdk:"network_policy_management"`
	EnvVarsInjectionPolicy     types.String `tfsdk:"env_vars_injection_policy"`
	VolumeClaimTemplatesPolicy types.String `tfsdk:"volume_claim_templates_policy"`
	NetworkPolicyRendered      types.String `tfsdk:"network_policy_rendered"`
}

// rules decodes the network_policy object; ok is false when it is null or
// unknown.
func rules(ctx context.Context, o types.Object, diags *diag.Diagnostics) (netrules.Rules, bool) {
	var r netrules.Rules
	if o.IsNull() || o.IsUnknown() {
		return r, false
	}
	d := o.As(ctx, &r, basetypes.ObjectAsOptions{})
	diags.Append(d...)
	return r, !d.HasError()
}

// renderedRules is network_policy_rendered for a planned network_policy:
// null when unset, unknown while any rule input is.
func renderedRules(ctx context.Context, o types.Object) (types.String, diag.Diagnostics) {
	var diags diag.Diagnostics
	if o.IsUnknown() {
		return types.StringUnknown(), diags
	}
	r, ok := rules(ctx, o, &diags)
	if !ok {
		return types.StringNull(), diags
	}
	in, eg, known, d := r.Render(ctx)
	diags.Append(d...)
	if !known || diags.HasError() {
		return types.StringUnknown(), diags
	}
	s, err := netrules.JSON(in, eg)
	if err != nil {
		diags.AddError("Cannot render the network policy rules", err.Error())
		return types.StringUnknown(), diags
	}
	return types.StringValue(s), diags
}

// build is the object the plan describes.
func (m resourceModel) build(ctx context.Context) (*unstructured.Unstructured, diag.Diagnostics) {
	bp, diags := blueprint.Expand(ctx, m.PodTemplate, m.VolumeClaimTemplates, m.Service)
	if diags.HasError() {
		return nil, diags
	}
	spec, err := blueprint.Content(extv1beta1.SandboxTemplateSpec{
		SandboxBlueprint:           bp,
		NetworkPolicyManagement:    extv1beta1.NetworkPolicyManagement(m.NetworkPolicyManagement.ValueString()),
		EnvVarsInjectionPolicy:     extv1beta1.EnvVarsInjectionPolicy(m.EnvVarsInjectionPolicy.ValueString()),
		VolumeClaimTemplatesPolicy: extv1beta1.VolumeClaimTemplatesPolicy(m.VolumeClaimTemplatesPolicy.ValueString()),
	})
	if err != nil {
		diags.AddError("Cannot build the SandboxTemplate", err.Error())
		return nil, diags
	}
	if r, ok := rules(ctx, m.NetworkPolicy, &diags); ok {
		in, eg, known, d := r.Render(ctx)
		diags.Append(d...)
		if !known {
			diags.AddError("Network policy not fully known",
				"Some network_policy attribute is still unknown at apply time. This is a bug in the provider; please report it.")
		}
		if diags.HasError() {
			return nil, diags
		}
		// Both lists always, [] included (netrules.Content): the typed struct's
		// omitempty would drop an empty list, and with it the provider's
		// ownership of "no rules".
		np, err := netrules.Content(in, eg)
		if err != nil {
			diags.AddError("Cannot render the network policy rules", err.Error())
			return nil, diags
		}
		spec["networkPolicy"] = np
	}
	obj := Kind.New()
	diags.Append(m.Expand(ctx, obj)...)
	obj.Object["spec"] = spec
	return obj, diags
}

// refresh brings m in line with the live template. importing means m holds
// only the identity (after ImportState): network_policy is then decoded
// from the live rules too (otherwise it keeps the configured value and
// drift shows in network_policy_rendered).
func (m *resourceModel) refresh(ctx context.Context, live *unstructured.Unstructured, fieldManager string, importing bool) diag.Diagnostics {
	md, diags := object.Flatten(ctx, live, m.Metadata, fieldManager)
	m.Metadata = md
	decoded, d := m.flatten(ctx, live, importing)
	diags.Append(d...)
	if importing && !d.HasError() {
		m.NetworkPolicy = decoded
	}
	return diags
}

// flatten fills t from the live template, keeping the prior spelling t
// holds where the value is the same (a data source's priors are null).
// With decode, it also returns the network_policy value that renders the
// live rules.
func (t *templateModel) flatten(ctx context.Context, live *unstructured.Unstructured, decode bool) (types.Object, diag.Diagnostics) {
	var diags, d diag.Diagnostics
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	tmpl, err := object.Decode[extv1beta1.SandboxTemplate](Kind, live)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read %s", ref), err.Error())
		return types.ObjectNull(netrules.AttrTypes()), diags
	}
	spec := tmpl.Spec
	t.PodTemplate, t.VolumeClaimTemplates, t.Service, d = blueprint.Flatten(ctx, spec.SandboxBlueprint, t.PodTemplate, t.VolumeClaimTemplates, t.Service)
	diags.Append(d...)
	t.NetworkPolicyManagement = tfvalues.StringOr(string(spec.NetworkPolicyManagement), string(extv1beta1.NetworkPolicyManagementManaged))
	t.EnvVarsInjectionPolicy = tfvalues.StringOr(string(spec.EnvVarsInjectionPolicy), string(extv1beta1.EnvVarsInjectionPolicyDisallowed))
	t.VolumeClaimTemplatesPolicy = tfvalues.StringOr(string(spec.VolumeClaimTemplatesPolicy), string(extv1beta1.VolumeClaimTemplatesPolicyDisallowed))
	rendered, decoded, err := liveNetworkPolicy(ctx, live, decode)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot read the network policy rules of %s", ref), err.Error())
		return decoded, diags
	}
	t.NetworkPolicyRendered = rendered
	return decoded, diags
}

// liveNetworkPolicy reads spec.networkPolicy: its canonical JSON (null
// when absent) and, when decode is set, the network_policy value that
// renders it.
func liveNetworkPolicy(ctx context.Context, live *unstructured.Unstructured, decode bool) (types.String, types.Object, error) {
	null := types.ObjectNull(netrules.AttrTypes())
	raw, found, _ := unstructured.NestedMap(live.Object, "spec", "networkPolicy")
	if !found {
		return types.StringNull(), null, nil
	}
	in, eg, err := netrules.Live(raw)
	if err != nil {
		return types.StringNull(), null, err
	}
	s, err := netrules.JSON(in, eg)
	if err != nil {
		return types.StringNull(), null, err
	}
	if !decode {
		return types.StringValue(s), null, nil
	}
	intent, err := netrules.Decode(in, eg)
	if err != nil {
		return types.StringNull(), null, fmt.Errorf("the rules cannot be expressed with network_policy: %w. Manage the "+
			"template's isolation with agentsandbox_network_policy and network_policy_management = \"Unmanaged\" instead", err)
	}
	r, d := netrules.Flatten(ctx, intent)
	if d.HasError() {
		return types.StringNull(), null, fmt.Errorf("%v", d)
	}
	o, d := types.ObjectValueFrom(ctx, netrules.AttrTypes(), r)
	if d.HasError() {
		return types.StringNull(), null, fmt.Errorf("%v", d)
	}
	return types.StringValue(s), o, nil
}
