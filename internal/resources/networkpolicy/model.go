package networkpolicy

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// resourceModel is the resource's state and plan: the rules (package
// netrules) at the top level, beside the pods they apply to.
type resourceModel struct {
	object.Metadata
	Template    types.String `tfsdk:"template"`
	PodSelector types.Object `tfsdk:"pod_selector"`
	netrules.Rules
	Rendered types.String   `tfsdk:"rendered"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

// policy is what a configuration asks for, every value known: which pods
// (Template, or PodSelector) and the rules.
type policy struct {
	Template    string             // "" when PodSelector is used
	PodSelector *netrules.Selector // nil when Template is used
	netrules.Intent
}

// expand returns the policy m asks for; known is false while any input is
// unknown (a plan), and `rendered` is then unknown.
func (m resourceModel) expand(ctx context.Context) (p policy, known bool, diags diag.Diagnostics) {
	p.Intent, known, diags = m.Intent(ctx)
	sel, selKnown, d := netrules.ExpandSelector(ctx, m.PodSelector)
	diags.Append(d...)
	p.PodSelector = sel
	p.Template = m.Template.ValueString()
	known = known && selKnown && !m.Template.IsUnknown() && !diags.HasError()
	return p, known, diags
}

// setInputs writes p into the input attributes of m (import: the state
// has only the identity until then).
func (m *resourceModel) setInputs(ctx context.Context, p policy) diag.Diagnostics {
	m.Template = types.StringNull()
	if p.Template != "" {
		m.Template = types.StringValue(p.Template)
	}
	sel, diags := netrules.FlattenSelector(ctx, p.PodSelector)
	m.PodSelector = sel
	rules, d := netrules.Flatten(ctx, p.Intent)
	diags.Append(d...)
	m.Rules = rules
	return diags
}
