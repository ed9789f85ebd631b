package sandboxapi

import "strings"

// The controller's optional configuration: the label domains a
// SandboxClaim's additionalPodMetadata may use.
//
// Every release's extensions controller Deployment, v0.5.0 to v1.0.3, mounts
// the ConfigMap ConfigMapName, optionally, at ConfigMountPath
// (k8s/extensions.controller.yaml:33-41 at v0.5.0, v0.5.1 and v1.0.1, :36-44
// at v0.5.2..v0.5.6, :39-51 at v1.0.3; the all-in-one asset gets the same
// mount from the patch in k8s/kustomization.yaml:41-63 at v0.5.2..v0.5.6,
// :38-60 at v1.0.1 and v1.0.3). The core-only Deployment
// (k8s/controller.yaml, the sandbox.yaml / manifest.yaml asset) mounts
// nothing: without the extensions no claim controller reads it.
//
// The controller reads the file ConfigMountPath/ConfigKeyAllowedLabelDomains
// once, when it starts, and only with --extensions
// (cmd/agent-sandbox-controller/main.go:306-323 at v0.5.0, :511-528 at
// v0.5.6): a change to the ConfigMap takes effect when the controller
// restarts.
const (
	// ConfigMapName is the controller's optional ConfigMap, in the
	// controller's namespace.
	ConfigMapName = "agent-sandbox-config"
	// ConfigKeyAllowedLabelDomains is its one key the controller reads.
	ConfigKeyAllowedLabelDomains = "allowed-label-domains"
	// ConfigMountPath is where the controller container mounts it.
	ConfigMountPath = "/etc/sandbox-config"
	// DefaultAllowedLabelDomain is the one allowed label domain when the
	// ConfigMap is absent or lists none
	// (extensions/controllers/sandboxclaim_controller.go:1535-1538 at v0.5.6).
	DefaultAllowedLabelDomain = "sandbox.users.io"
)

// ParseAllowedLabelDomains reads the value of ConfigKeyAllowedLabelDomains as
// the controller does (main.go:513-524 at v0.5.6): domains separated by
// commas or line breaks, each trimmed and lower-cased, blanks skipped. It
// returns nil when the value names no domain, which means the default.
func ParseAllowedLabelDomains(value string) []string {
	var out []string
	for _, d := range strings.FieldsFunc(value, func(c rune) bool { return c == ',' || c == '\n' || c == '\r' }) {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// EffectiveLabelDomains is what the controller allows: domains, or the
// default when there are none (sandboxclaim_controller.go:1535-1538 at
// v0.5.6). A configured list replaces the default; it does not add to it.
func EffectiveLabelDomains(domains []string) []string {
	if len(domains) == 0 {
		return []string{DefaultAllowedLabelDomain}
	}
	return domains
}

// LabelDomainAllowed says whether the controller accepts a claim pod label
// with this key prefix (the part before "/"): the prefix, lower-cased,
// equals an allowed domain or is a subdomain of one
// (sandboxclaim_controller.go:1554-1573 at v0.5.6). Annotations are not
// subject to it.
func LabelDomainAllowed(prefix string, allowed []string) bool {
	prefix = strings.ToLower(prefix)
	for _, d := range allowed {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return true
		}
	}
	return false
}

// ControllerDeploymentName is the controller Deployment of every upstream
// release (k8s/controller.yaml and k8s/extensions.controller.yaml:5 at
// v0.5.6), in ControllerNamespace.
const (
	ControllerDeploymentName = "agent-sandbox-controller"
	ControllerNamespace      = "agent-sandbox-system"
)

// MountsConfig says whether a Deployment (unstructured) mounts the
// ConfigMap ConfigMapName where the controller reads it: a volume of that
// ConfigMap, mounted at ConfigMountPath in the container named
// ControllerDeploymentName (else the first container), as upstream's
// extensions controller does.
func MountsConfig(deployment map[string]any) bool {
	podSpec, _ := nested(deployment, "spec", "template", "spec").(map[string]any)
	volume := ""
	volumes, _ := podSpec["volumes"].([]any)
	for _, v := range volumes {
		m, _ := v.(map[string]any)
		if name, _ := nested(m, "configMap", "name").(string); name == ConfigMapName {
			volume, _ = m["name"].(string)
			break
		}
	}
	if volume == "" {
		return false
	}
	containers, _ := podSpec["containers"].([]any)
	var container map[string]any
	for _, c := range containers {
		m, _ := c.(map[string]any)
		if m == nil {
			continue
		}
		if m["name"] == ControllerDeploymentName {
			container = m
			break
		}
		if container == nil {
			container = m
		}
	}
	mounts, _ := container["volumeMounts"].([]any)
	for _, mt := range mounts {
		m, _ := mt.(map[string]any)
		if p, _ := m["mountPath"].(string); m["name"] == volume && strings.TrimRight(p, "/") == ConfigMountPath {
			return true
		}
	}
	return false
}

// nested returns the value at path in m, or nil.
func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}
