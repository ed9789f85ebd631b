package blueprint

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// ServiceAttribute is `service`; what gets the Service is described by the
// caller (what).
func ServiceAttribute(what string) schema.BoolAttribute {
	return schema.BoolAttribute{
		Optional: true,
		MarkdownDescription: fmt.Sprintf("Whether %s get a headless Service named like the sandbox, which gives "+
			"the sandbox a stable DNS name (`<sandbox>.<namespace>.svc.<cluster domain>`). `true`: the controller "+
			"creates it; `false`: none, and one that exists is deleted; unset: the controller creates none but keeps "+
			"one that already exists (upstream's `spec.service` left unset, api/v1beta1/sandbox_types.go:260-267 at "+
			"v0.5.6), and the provider leaves the field to whoever sets it.", what),
	}
}

// Expand builds the blueprint from planned values (every value known).
func Expand(ctx context.Context, podTemplate types.Object, claims types.List, service types.Bool) (agentsv1beta1.SandboxBlueprint, diag.Diagnostics) {
	var b agentsv1beta1.SandboxBlueprint
	// Sent when set, false included: the provider then owns the field, and
	// a Service switched on out of band is switched off again. Unset is
	// not sent: upstream's controller then keeps an existing Service and
	// creates none (reconcileService, controllers/sandbox_controller.go:
	// 979-1040 at v0.5.6).
	if !service.IsNull() && !service.IsUnknown() {
		s := service.ValueBool()
		b.Service = &s
	}
	pt, diags := podtemplate.Expand(ctx, podTemplate)
	if diags.HasError() {
		return b, diags
	}
	b.PodTemplate = pt
	vcts, d := ExpandVolumeClaimTemplates(ctx, claims)
	diags.Append(d...)
	b.VolumeClaimTemplates = vcts
	return b, diags
}

// Flatten reads the blueprint of a live object back into the attribute
// values; the priors (null on import and in data sources) only decide
// spelling, and whether service is managed: a resource whose service is
// unset (null prior with a known pod template) leaves spec.service to
// others, so it stays null whatever the live value.
func Flatten(ctx context.Context, live agentsv1beta1.SandboxBlueprint, priorPod types.Object, priorClaims types.List, priorService types.Bool) (pod types.Object, claims types.List, service types.Bool, diags diag.Diagnostics) {
	pod, diags = podtemplate.Flatten(ctx, live.PodTemplate, priorPod)
	claims, d := FlattenVolumeClaimTemplates(ctx, live.VolumeClaimTemplates, priorClaims)
	diags.Append(d...)
	switch {
	case live.Service == nil:
		service = types.BoolNull()
	case priorService.IsNull() && !priorPod.IsNull():
		service = types.BoolNull()
	default:
		service = types.BoolValue(*live.Service)
	}
	return pod, claims, service, diags
}

// Content converts a typed API value (a spec that holds a blueprint) into
// the unstructured form sent to the API server: the JSON encoding, so
// omitempty decides what is left out exactly as it does for any Go client,
// except for the empty metadata objects upstream's types always write,
// which are left out too (sandboxapi.OmitEmptyMetadata says why).
func Content(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	sandboxapi.OmitEmptyMetadata(m)
	return m, nil
}
