package sandboxapi

import (
	"fmt"
	"hash/fnv"

	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
)

// NameHash is the label value upstream derives from an object name (for
// LabelSandboxNameHash and for upstream's agentsv1beta1.SandboxWarmPoolLabel
// and SandboxTemplateRefHashLabel): the 32-bit FNV-1a hash of the name's
// bytes, written as exactly 8 lowercase hexadecimal digits (zero-padded). It always fits a label value, whatever the
// length of the name.
func NameHash(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name)) // hash.Hash.Write never fails
	return fmt.Sprintf("%08x", h.Sum32())
}

// SandboxSelector is the label selector, in string form, that a Sandbox
// reports in status.selector while it has a pod:
// LabelSandboxNameHash=NameHash(sandbox).
func SandboxSelector(sandbox string) string {
	return LabelSandboxNameHash + "=" + NameHash(sandbox)
}

// WarmPoolSelector is the label selector, in string form, that a warm pool
// reports in status.selector (and its scale subresource exposes): the pool's
// sandboxes carry agentsv1beta1.SandboxWarmPoolLabel=NameHash(pool).
func WarmPoolSelector(pool string) string {
	return agentsv1beta1.SandboxWarmPoolLabel + "=" + NameHash(pool)
}

// TemplateNetworkPolicyName is the name of the NetworkPolicy the controller
// manages for a SandboxTemplate (networkPolicyManagement Managed), in the
// template's namespace.
func TemplateNetworkPolicyName(template string) string {
	return template + "-network-policy"
}
