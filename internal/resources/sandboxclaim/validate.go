package sandboxclaim

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// The controller's own rules for additionalPodMetadata (upstream's
// validation of a claim), applied at plan time where they do not depend on
// the controller's settings, so that a claim the controller would reject
// with InvalidMetadata fails before anything is written.

// defaultAllowedLabelDomain is upstream's default for the label domains a
// claim may use (the controller's allowed-label-domains setting).
const defaultAllowedLabelDomain = "sandbox.users.io"

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

// podLabels validates additional_pod_metadata.labels beyond the generic
// label rules: each key needs a domain prefix (upstream only accepts keys in
// its allowed label domains, so that a claim cannot opt its pod into
// someone else's NetworkPolicy), and the sandbox router's identity
// app=sandbox-router is refused.
type podLabels struct{}

func (podLabels) Description(context.Context) string {
	return fmt.Sprintf("label keys need a domain prefix allowed by the controller (by default %s/...), and app=sandbox-router is reserved", defaultAllowedLabelDomain)
}

func (v podLabels) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (podLabels) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key, val := range req.ConfigValue.Elements() {
		p := req.Path.AtMapKey(key)
		if len(k8svalidation.IsQualifiedName(key)) > 0 || sandboxapi.IsReservedKey(key) {
			continue // reported by validate.Labels
		}
		if s, ok := val.(types.String); ok && !s.IsNull() && !s.IsUnknown() &&
			strings.EqualFold(key, "app") && strings.EqualFold(s.ValueString(), "sandbox-router") {
			resp.Diagnostics.AddAttributeError(p, "Reserved pod label",
				fmt.Sprintf("%s = %q is the sandbox router's identity, which NetworkPolicies admit to every sandbox; a "+
					"claim may not give it to its pod.", key, s.ValueString()))
			continue
		}
		if !strings.Contains(key, "/") {
			resp.Diagnostics.AddAttributeError(p, "Pod label key without a domain",
				fmt.Sprintf("%q has no domain prefix. The agent-sandbox controller only accepts claim labels in its allowed "+
					"label domains (by default %s, e.g. %q), so that a claim cannot join its pod to selectors meant for "+
					"other pods.", key, defaultAllowedLabelDomain, defaultAllowedLabelDomain+"/"+key))
		}
	}
}

// podAnnotations refuses annotation keys in Kubernetes' and the
// controller's domains, which a claim may not set on its pod.
type podAnnotations struct{}

func (podAnnotations) Description(context.Context) string {
	return "annotation keys may not be in the kubernetes.io, k8s.io or agents.x-k8s.io domains (except " + sandboxapi.AnnotationSafeToEvict + ")"
}

func (v podAnnotations) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (podAnnotations) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key := range req.ConfigValue.Elements() {
		prefix, _, ok := strings.Cut(key, "/")
		if !ok || len(k8svalidation.IsQualifiedName(key)) > 0 || sandboxapi.IsReservedKey(key) || key == sandboxapi.AnnotationSafeToEvict {
			continue // no domain, or reported by validate.Annotations
		}
		if inDomain(prefix, restrictedAnnotationDomains) {
			resp.Diagnostics.AddAttributeError(req.Path.AtMapKey(key), "Restricted pod annotation",
				fmt.Sprintf("%q is in the %s domain, which the agent-sandbox controller does not let a claim set on its pod "+
					"(only %s is allowed there). Use a key under your own domain.", key, prefix, sandboxapi.AnnotationSafeToEvict))
		}
	}
}

// envVarName accepts what Kubernetes accepts as an environment variable
// name.
type envVarName struct{}

func (envVarName) Description(context.Context) string {
	return "must be a valid environment variable name (printable ASCII, no '=')"
}

func (v envVarName) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v envVarName) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if errs := k8svalidation.IsEnvVarName(req.ConfigValue.ValueString()); len(errs) > 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid environment variable name",
			fmt.Sprintf("%q is not a valid environment variable name: %s.", req.ConfigValue.ValueString(), strings.Join(errs, "; ")))
	}
}

// uniqueEnv refuses two entries for the same variable in the same
// container: which one wins would depend on the controller.
type uniqueEnv struct{}

func (uniqueEnv) Description(context.Context) string {
	return "each variable may be set once per container"
}

func (v uniqueEnv) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (uniqueEnv) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	seen := map[[2]string]int{}
	for i, e := range req.ConfigValue.Elements() {
		obj, ok := e.(basetypes.ObjectValue)
		if !ok || obj.IsNull() || obj.IsUnknown() {
			continue
		}
		name, nameKnown := tfvalues.StringIfKnown(obj.Attributes()["name"])
		container, containerKnown := tfvalues.StringIfKnown(obj.Attributes()["container_name"])
		if !nameKnown || !containerKnown {
			continue
		}
		key := [2]string{name, container}
		if first, dup := seen[key]; dup {
			where := "the first container"
			if container != "" {
				where = fmt.Sprintf("container %q", container)
			}
			resp.Diagnostics.AddAttributeError(req.Path.AtListIndex(i).AtName("name"), "Duplicate environment variable",
				fmt.Sprintf("env[%d] and env[%d] both set %q in %s. Set each variable once.", first, i, name, where))
			continue
		}
		seen[key] = i
	}
}
