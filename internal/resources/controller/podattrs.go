package controller

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// The pod attributes agentsandbox_controller (inside `controller`) and
// agentsandbox_sandbox_router (at the top level) share: resource requests
// and limits, and tolerations, with their checks.

// resourcesAttribute is a container's requests and limits.
func resourcesAttribute(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Attributes: map[string]schema.Attribute{
			"requests": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "e.g. `{ cpu = \"200m\", memory = \"256Mi\" }`.",
				Validators:          validators.ResourceList(),
			},
			"limits": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "e.g. `{ memory = \"1Gi\" }`.",
				Validators:          validators.ResourceList(),
			},
		},
	}
}

// labelsAttribute is an optional map of Kubernetes labels.
func labelsAttribute(description string) schema.MapAttribute {
	return schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: description,
		Validators:          []validator.Map{validators.Labels()},
	}
}

// tolerationsAttribute is a pod's tolerations.
func tolerationsAttribute(description string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"key": schema.StringAttribute{
					Optional: true, MarkdownDescription: "Taint key; empty with operator `Exists` tolerates every taint.",
					Validators: []validator.String{validators.QualifiedName()},
				},
				"operator": schema.StringAttribute{
					Optional: true, MarkdownDescription: "`Equal` (default) or `Exists`.",
					Validators: []validator.String{stringvalidator.OneOf("Equal", "Exists")},
				},
				"value": schema.StringAttribute{
					Optional: true, MarkdownDescription: "Taint value, for operator `Equal`.",
					Validators: []validator.String{validators.LabelValue()},
				},
				"effect": schema.StringAttribute{
					Optional: true, MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`; empty matches all.",
					Validators: []validator.String{stringvalidator.OneOf("NoSchedule", "PreferNoSchedule", "NoExecute")},
				},
				"toleration_seconds": schema.Int64Attribute{
					Optional: true, MarkdownDescription: "For `NoExecute`: how long the pod stays bound after the taint appears.",
					Validators: []validator.Int64{int64validator.AtLeast(0)},
				},
			},
		},
	}
}

// checkTolerations refuses tolerations the API server would refuse, at
// their attribute paths under at.
func checkTolerations(at path.Path, tolerations []map[string]any, diags *diag.Diagnostics) {
	for i, t := range tolerations {
		p := at.AtListIndex(i)
		if t["operator"] == "Exists" && t["value"] != nil {
			diags.AddAttributeError(p.AtName("value"), "Invalid toleration",
				"With operator Exists a toleration matches any value; remove `value` or use operator Equal.")
		}
		if t["tolerationSeconds"] != nil && t["effect"] != "NoExecute" {
			diags.AddAttributeError(p.AtName("toleration_seconds"), "Invalid toleration",
				"toleration_seconds only applies to effect NoExecute.")
		}
		if t["key"] == nil && t["operator"] != "Exists" {
			diags.AddAttributeError(p.AtName("key"), "Invalid toleration",
				"A toleration without a key must use operator Exists (it then tolerates every taint).")
		}
	}
}
