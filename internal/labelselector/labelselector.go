// Package labelselector is the Kubernetes label selector as the provider's
// schemas spell it, written once: match_labels, and match_expressions
// whose entries have a key, an operator and values; the model that reads
// it; and the check of the values against the operator. Package netrules
// uses it for the pod and namespace selectors of the network rules
// (agentsandbox_network_policy, and agentsandbox_sandbox_template's
// network_policy), package podtemplate for pod anti-affinity's
// label_selector and for node affinity's match_expressions, whose
// operators add Gt and Lt (NodeOperators).
//
// The checks are those the API server makes of a metav1.LabelSelector
// (k8s.io/apimachinery pkg/apis/meta/v1/validation
// ValidateLabelSelectorRequirement) and of a core/v1 NodeSelectorRequirement
// (k8s.io/kubernetes pkg/apis/core/validation ValidateNodeSelectorRequirement):
// a qualified-name key, a known operator, values by operator, and every
// value a valid label value.
package labelselector

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Operators are those of a label selector requirement
// (metav1.LabelSelectorOperator); NodeOperators those of a node selector
// requirement (corev1.NodeSelectorOperator), which compares a node label
// with an integer too.
var (
	Operators     = []string{"In", "NotIn", "Exists", "DoesNotExist"}
	NodeOperators = append(slices.Clip(Operators), "Gt", "Lt")
)

// Model is the value of an Attribute.
type Model struct {
	MatchLabels      types.Map  `tfsdk:"match_labels"`
	MatchExpressions types.List `tfsdk:"match_expressions"` // of RequirementModel
}

// RequirementModel is one entry of a Requirements attribute.
type RequirementModel struct {
	Key      types.String `tfsdk:"key"`
	Operator types.String `tfsdk:"operator"`
	Values   types.List   `tfsdk:"values"`
}

// Attribute is an optional label selector of the objects of kind "of"
// ("pod", "namespace"); description says which ones it chooses. Keys may be
// under agents.x-k8s.io/: selecting on the controller's labels is fine, only
// setting them is not.
func Attribute(description, of string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description + " Requirements are ANDed.",
		Attributes: map[string]schema.Attribute{
			"match_labels": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Labels a " + of + " must carry to be selected, key and value.",
				Validators:          []validator.Map{validators.Labels()},
			},
			"match_expressions": Requirements(of, Operators),
		},
	}
}

// Requirements is an optional match_expressions attribute: requirements on
// the labels of the objects of kind "of", each with one of operators
// (Operators or NodeOperators).
func Requirements(of string, operators []string) schema.ListNestedAttribute {
	rule := requirementRule{operators: operators}
	return schema.ListNestedAttribute{
		Optional:            true,
		MarkdownDescription: "Requirements on " + of + " labels, all of which must hold.",
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"key": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Label key.",
					Validators:          []validator.String{validators.QualifiedName()},
				},
				"operator": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "One of " + quoteList(operators) + ".",
					Validators:          []validator.String{stringvalidator.OneOf(operators...)},
				},
				"values": schema.ListAttribute{
					Optional:            true,
					ElementType:         types.StringType,
					MarkdownDescription: "Label values: " + rule.Description(context.Background()) + ".",
					Validators:          []validator.List{listvalidator.ValueStringsAre(validators.LabelValue())},
				},
			},
			Validators: []validator.Object{rule},
		},
	}
}

// requirementRule checks a requirement's values against its operator: at
// least one for In and NotIn, none for Exists and DoesNotExist, exactly one
// integer for Gt and Lt. An operator outside operators is left to the
// operator attribute's own validator.
type requirementRule struct{ operators []string }

func (r requirementRule) Description(context.Context) string {
	d := "at least one for `In` and `NotIn`, none for `Exists` and `DoesNotExist`"
	if slices.Contains(r.operators, "Gt") {
		d += ", exactly one integer for `Gt` and `Lt`"
	}
	return d
}

func (r requirementRule) MarkdownDescription(ctx context.Context) string { return r.Description(ctx) }

func (r requirementRule) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	op, ok := tfvalues.StringIfSet(attrs["operator"])
	if !ok || !slices.Contains(r.operators, op) {
		return
	}
	values, _ := attrs["values"].(types.List)
	if values.IsUnknown() {
		return
	}
	at := req.Path.AtName("values")
	elems := values.Elements()
	switch op {
	case "In", "NotIn":
		if len(elems) == 0 {
			resp.Diagnostics.AddAttributeError(at, "Missing values",
				fmt.Sprintf("Operator %s compares the label with a list of values; give at least one.", op))
		}
	case "Exists", "DoesNotExist":
		if len(elems) > 0 {
			resp.Diagnostics.AddAttributeError(at, "Unexpected values",
				fmt.Sprintf("Operator %s only tests whether the key is present; remove values.", op))
		}
	case "Gt", "Lt":
		if len(elems) != 1 {
			resp.Diagnostics.AddAttributeError(at, "Wrong number of values",
				fmt.Sprintf("Operator %s compares the label with one integer; give exactly one value, not %d.", op, len(elems)))
			return
		}
		if s, ok := tfvalues.StringIfSet(elems[0]); ok {
			if _, err := strconv.ParseInt(s, 10, 64); err != nil {
				resp.Diagnostics.AddAttributeError(at, "Value not an integer",
					fmt.Sprintf("Operator %s compares integers; %q is not one. Write a whole number such as \"3\".", op, s))
			}
		}
	}
}

// quoteList is "`a`, `b` or `c`".
func quoteList(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = "`" + s + "`"
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// Type is the object type of an Attribute, RequirementType that of one
// entry of Requirements (either operator list: the types are the same).
var (
	Type            = tfvalues.ElementType(Attribute("", ""))
	RequirementType = tfvalues.ElementType(Requirements("", Operators))
)
