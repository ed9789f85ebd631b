package controller

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"

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
				MarkdownDescription: "Resources reserved for scheduling, by name, each at most its limit, e.g. `{ cpu = \"200m\", memory = \"256Mi\" }`.",
				Validators:          validators.ResourceList(),
			},
			"limits": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Maximum resources, by name, e.g. `{ memory = \"1Gi\" }`.",
				Validators:          validators.ResourceList(),
			},
		},
	}
}

// resourcesOf reads a resources attribute as pod_template's containers have
// it; ok is false when it is null, unknown or unreadable.
func resourcesOf(ctx context.Context, o types.Object) (podtemplate.ResourcesModel, bool) {
	var rm podtemplate.ResourcesModel
	if o.IsNull() || o.IsUnknown() {
		return rm, false
	}
	return rm, !o.As(ctx, &rm, objectAsOptions).HasError()
}

// expandResources reads a resources attribute into the container's
// requests and limits (nil when unset); set is false when the attribute is
// null, which keeps the release's.
func expandResources(ctx context.Context, o types.Object, diags *diag.Diagnostics) (requests, limits map[string]string, set bool) {
	if o.IsNull() {
		return nil, nil, false
	}
	var rm podtemplate.ResourcesModel
	diags.Append(o.As(ctx, &rm, objectAsOptions)...)
	if !rm.Requests.IsNull() {
		diags.Append(rm.Requests.ElementsAs(ctx, &requests, false)...)
	}
	if !rm.Limits.IsNull() {
		diags.Append(rm.Limits.ElementsAs(ctx, &limits, false)...)
	}
	return requests, limits, true
}

// labelsAttribute is an optional map of Kubernetes labels.
func labelsAttribute(description string) schema.MapAttribute {
	return schema.MapAttribute{
		Optional: true, ElementType: types.StringType,
		MarkdownDescription: description,
		Validators:          []validator.Map{validators.Labels()},
	}
}

// tolerationsAttribute is a pod's tolerations, as pod_template has them,
// except that a negative toleration_seconds (which Kubernetes reads as 0) is
// refused.
func tolerationsAttribute(description string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		NestedObject:        schema.NestedAttributeObject{Attributes: podtemplate.TolerationAttributes(int64validator.AtLeast(0))},
	}
}

// checkTolerations refuses, at their attribute paths under at, the
// tolerations (of podtemplate.TolerationModel) the API server would refuse;
// a toleration without key is reported on its `key`.
func checkTolerations(ctx context.Context, at path.Path, tolerations types.List, diags *diag.Diagnostics) {
	podtemplate.CheckTolerations(ctx, tolerations, at, "key", diags)
}

// expandTolerations is the Deployment's tolerations, each with only the
// fields that are set, as the API server stores them, so that nothing set
// here is later "changed" by the server dropping an empty string.
func expandTolerations(ctx context.Context, l types.List, diags *diag.Diagnostics) []map[string]any {
	var tols []podtemplate.TolerationModel
	diags.Append(l.ElementsAs(ctx, &tols, false)...)
	out := make([]map[string]any, 0, len(tols))
	for _, t := range tols {
		k := podtemplate.ExpandToleration(t)
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&k)
		if err != nil {
			diags.AddError("Cannot encode a toleration", err.Error()) // a corev1.Toleration always converts
			continue
		}
		out = append(out, u)
	}
	return out
}
