package validators

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// The rules are Kubernetes' own (k8s.io/apimachinery/pkg/util/validation),
// applied at plan time so a bad name fails before any request, with the
// attribute path, instead of as a 422 during apply.

// DNSSubdomainName accepts an object name such as a Sandbox's or a
// ConfigMap's: lower-case RFC 1123 subdomain, at most 253 characters.
func DNSSubdomainName() validator.String {
	return stringCheck{summary: "Invalid name", desc: "must be a lower-case RFC 1123 subdomain (letters, digits, '-' and '.', at most 253 characters)", check: k8svalidation.IsDNS1123Subdomain}
}

// DNSLabelName accepts a namespace, container or port name: lower-case RFC
// 1123 label, at most 63 characters.
func DNSLabelName() validator.String {
	return stringCheck{summary: "Invalid name", desc: "must be a lower-case RFC 1123 label (letters, digits and '-', at most 63 characters)", check: k8svalidation.IsDNS1123Label}
}

// capabilityName is a Linux capability as a container's securityContext
// names it: without the CAP_ prefix, in upper case (NET_BIND_SERVICE); ALL
// stands for every capability.
var capabilityName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// CapabilityName accepts a Linux capability as a container's
// securityContext.capabilities adds or drops it; example names one in the
// message ("NET_BIND_SERVICE", or "NET_RAW, or ALL" for a list that drops).
func CapabilityName(example string) validator.String {
	return Valid("Invalid capability", "must be a capability name such as "+example, capabilityName.MatchString)
}

// LabelValue accepts a label value (also used for selector values).
func LabelValue() validator.String {
	return stringCheck{summary: "Invalid label value", desc: "must be a valid label value (at most 63 characters, alphanumerics, '-', '_' or '.')", check: k8svalidation.IsValidLabelValue}
}

// QualifiedName accepts a label or annotation key: an optional DNS prefix
// and a name, e.g. app.kubernetes.io/name.
func QualifiedName() validator.String {
	return stringCheck{summary: "Invalid key", desc: "must be a qualified name such as app or example.com/app", check: k8svalidation.IsQualifiedName}
}

// ConfigMapKey accepts a key of a ConfigMap or Secret (what a key
// reference or a projected item names): letters, digits, '-', '_' and
// '.', at most 253 characters, not "." or "..".
func ConfigMapKey() validator.String {
	return stringCheck{summary: "Invalid key", desc: "must be a ConfigMap or Secret key (letters, digits, '-', '_' and '.', at most 253 characters)", check: k8svalidation.IsConfigMapKey}
}

// envFieldPaths are the pod fields an environment variable can take
// (Kubernetes' validEnvDownwardAPIFieldPathExpressions, pkg/apis/core/
// validation), besides one label or annotation.
var envFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
	"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}

// EnvFieldPath accepts the field_path of an environment variable's
// field_ref: one of envFieldPaths, or metadata.labels['key'] or
// metadata.annotations['key'].
func EnvFieldPath() validator.String {
	desc := "must be one of " + strings.Join(envFieldPaths, ", ") + ", or metadata.labels['<key>'] or metadata.annotations['<key>']"
	return Check{Summary: "Unsupported field path", Desc: desc, Problem: func(s string) string {
		if slices.Contains(envFieldPaths, s) {
			return ""
		}
		for _, prefix := range []string{"metadata.labels['", "metadata.annotations['"} {
			if key, ok := strings.CutPrefix(s, prefix); ok && strings.HasSuffix(key, "']") &&
				len(k8svalidation.IsQualifiedName(strings.TrimSuffix(key, "']"))) == 0 {
				return ""
			}
		}
		return fmt.Sprintf("%q is not a pod field an environment variable can take: the field path %s "+
			"(the API server refuses any other).", s, desc)
	}}
}

// Labels validates a map of labels: keys are qualified names, values label
// values, and no key may use a reserved prefix (a key owned by a controller,
// which would otherwise fight with it).
func Labels(reservedPrefixes ...string) validator.Map {
	return metadataMap{kind: "label", checkValue: k8svalidation.IsValidLabelValue, reserved: reservedPrefixes}
}

// LabelsAllowing is Labels with exceptions: the keys in allowed may be set
// although they lie under a reserved prefix (labels the controller reads
// from users rather than writes, such as agents.x-k8s.io/created-by).
func LabelsAllowing(allowed []string, reservedPrefixes ...string) validator.Map {
	return metadataMap{kind: "label", checkValue: k8svalidation.IsValidLabelValue, reserved: reservedPrefixes, allowed: allowed}
}

// Annotations validates a map of annotations: keys are qualified names and
// no key may use a reserved prefix. Values are free text.
func Annotations(reservedPrefixes ...string) validator.Map {
	return metadataMap{kind: "annotation", reserved: reservedPrefixes}
}

type metadataMap struct {
	kind       string
	checkValue func(string) []string
	reserved   []string
	allowed    []string // exceptions to reserved
}

func (v metadataMap) Description(context.Context) string {
	d := fmt.Sprintf("%s keys must be qualified names", v.kind)
	if v.checkValue != nil {
		d += " and values valid label values"
	}
	if len(v.reserved) > 0 {
		d += fmt.Sprintf("; keys under %s are reserved for the controller", strings.Join(v.reserved, ", "))
		if len(v.allowed) > 0 {
			d += fmt.Sprintf(" (except %s)", strings.Join(v.allowed, ", "))
		}
	}
	return d
}

func (v metadataMap) MarkdownDescription(c context.Context) string { return v.Description(c) }

func (v metadataMap) ValidateMap(ctx context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for key, val := range req.ConfigValue.Elements() {
		p := req.Path.AtMapKey(key)
		if errs := k8svalidation.IsQualifiedName(key); len(errs) > 0 {
			resp.Diagnostics.AddAttributeError(p, "Invalid "+v.kind+" key",
				fmt.Sprintf("%q is not a valid %s key: %s.", key, v.kind, strings.Join(errs, "; ")))
			continue
		}
		for _, prefix := range v.reserved {
			if strings.HasPrefix(key, prefix) && !slices.Contains(v.allowed, key) {
				resp.Diagnostics.AddAttributeError(p, "Reserved "+v.kind+" key",
					fmt.Sprintf("%q uses the prefix %q, which the agent-sandbox controller owns; it would overwrite or "+
						"remove the value. Use a key under your own domain instead.", key, prefix))
			}
		}
		s, ok := val.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() || v.checkValue == nil {
			continue
		}
		if errs := v.checkValue(s.ValueString()); len(errs) > 0 {
			resp.Diagnostics.AddAttributeError(p, "Invalid "+v.kind+" value",
				fmt.Sprintf("%q is not a valid %s value: %s.", s.ValueString(), v.kind, strings.Join(errs, "; ")))
		}
	}
}
