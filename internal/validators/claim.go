package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// The agent-sandbox controller's own rules for a claim's
// additionalPodMetadata (upstream's validation of a claim), applied at plan
// time where they do not depend on the controller's settings, so that a
// claim the controller would reject with InvalidMetadata fails before
// anything is written. Keys that are not qualified names or use a reserved
// prefix are left to Labels and Annotations, which run beside these.

// restrictedAnnotationDomains may not be used through additionalPodMetadata
// (with the autoscaler's safe-to-evict annotation as the one exception).
var restrictedAnnotationDomains = []string{"kubernetes.io", "k8s.io", "agents.x-k8s.io"}

func inDomain(domain string, domains []string) bool {
	domain = strings.ToLower(domain)
	for _, d := range domains {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

// ClaimPodLabels validates a claim's additional pod labels beyond the
// generic label rules: each key needs a domain prefix (upstream only accepts
// keys in its allowed label domains, by default allowedDomain, so that a
// claim cannot opt its pod into someone else's NetworkPolicy), and the
// sandbox router's identity app=sandbox-router is refused.
func ClaimPodLabels(allowedDomain string) validator.Map {
	return claimPodLabels{described(fmt.Sprintf("label keys need a domain prefix allowed by the controller (by "+
		"default %s/...), and app=sandbox-router is reserved", allowedDomain)), allowedDomain}
}

type claimPodLabels struct {
	described
	domain string
}

func (v claimPodLabels) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key, val := range req.ConfigValue.Elements() {
		p := req.Path.AtMapKey(key)
		if len(k8svalidation.IsQualifiedName(key)) > 0 || sandboxapi.IsReservedKey(key) {
			continue // reported by Labels
		}
		if s, ok := val.(types.String); ok && !s.IsNull() && !s.IsUnknown() &&
			strings.EqualFold(key, sandboxapi.RouterLabelKey) && strings.EqualFold(s.ValueString(), sandboxapi.RouterLabelValue) {
			resp.Diagnostics.AddAttributeError(p, "Reserved pod label",
				fmt.Sprintf("%s = %q is the sandbox router's identity, which NetworkPolicies admit to every sandbox; a "+
					"claim may not give it to its pod.", key, s.ValueString()))
			continue
		}
		if !strings.Contains(key, "/") {
			resp.Diagnostics.AddAttributeError(p, "Pod label key without a domain",
				fmt.Sprintf("%q has no domain prefix. The agent-sandbox controller only accepts claim labels in its allowed "+
					"label domains (by default %s, e.g. %q), so that a claim cannot join its pod to selectors meant for "+
					"other pods.", key, v.domain, v.domain+"/"+key))
		}
	}
}

// ClaimPodAnnotations refuses annotation keys in Kubernetes' and the
// controller's domains, which a claim may not set on its pod.
func ClaimPodAnnotations() validator.Map {
	return claimPodAnnotations{"annotation keys may not be in the kubernetes.io, k8s.io or agents.x-k8s.io domains (except " +
		sandboxapi.AnnotationSafeToEvict + ")"}
}

type claimPodAnnotations struct{ described }

func (claimPodAnnotations) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key := range req.ConfigValue.Elements() {
		prefix, _, ok := strings.Cut(key, "/")
		if !ok || len(k8svalidation.IsQualifiedName(key)) > 0 || sandboxapi.IsReservedKey(key) || key == sandboxapi.AnnotationSafeToEvict {
			continue // no domain, or reported by Annotations
		}
		if inDomain(prefix, restrictedAnnotationDomains) {
			resp.Diagnostics.AddAttributeError(req.Path.AtMapKey(key), "Restricted pod annotation",
				fmt.Sprintf("%q is in the %s domain, which the agent-sandbox controller does not let a claim set on its pod "+
					"(only %s is allowed there). Use a key under your own domain.", key, prefix, sandboxapi.AnnotationSafeToEvict))
		}
	}
}
