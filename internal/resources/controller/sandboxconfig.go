package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// allowed_label_domains becomes the controller's optional ConfigMap
// sandboxapi.ConfigMapName (see there for the upstream facts) in the
// controller Deployment's namespace, applied with the bundle: it is in the
// inventory (drift, out-of-band deletion and pruning work as for every other
// object) and applied in the configuration stage, before the Deployment.
//
// The controller reads the ConfigMap only when it starts, so the Deployment's
// pod template carries a digest of the ConfigMap's content
// (sandboxConfigAnnotation): a change of the domains changes the template and
// rolls the controller, and removing the attribute removes the annotation
// (another rollout) and the ConfigMap. A removed ConfigMap is deleted before
// the Deployment is applied (see install), so the new controller pod starts
// without it and falls back to the default domain.

// sandboxConfigAnnotation is the pod-template annotation holding the SHA-256
// of the rendered allowed-label-domains value.
const sandboxConfigAnnotation = "agentsandbox.dev/sandbox-config-sha256"

// sandboxConfigSource names the rendered ConfigMap in messages, where other
// objects name their manifest file.
const sandboxConfigSource = "allowed_label_domains"

// renderAllowedLabelDomains is the ConfigMap value for domains: sorted,
// without duplicates, comma-separated (one of the two separators upstream
// accepts, main.go:516-518 at v0.5.6), so equal sets render equally.
func renderAllowedLabelDomains(domains []string) string {
	d := slices.Clone(domains)
	slices.Sort(d)
	return strings.Join(slices.Compact(d), ",")
}

// addSandboxConfig adds the ConfigMap for domains to objs and the digest
// annotation to the controller Deployment's pod template. It refuses a
// bundle whose controller Deployment does not mount the ConfigMap where the
// controller reads it: the setting would never take effect.
func addSandboxConfig(objs []object, domains []string) ([]object, error) {
	dep := findControllerDeployment(objs)
	if dep == nil {
		return objs, fmt.Errorf("the manifest has no Deployment named %q, the controller that reads the %s ConfigMap",
			ControllerDeploymentName, sandboxapi.ConfigMapName)
	}
	if err := checkMountsSandboxConfig(dep); err != nil {
		return objs, err
	}
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == sandboxapi.ConfigMapName && o.GetNamespace() == dep.GetNamespace() {
			return objs, sandboxConfigError{
				problem: fmt.Sprintf("%s: the manifest has its own ConfigMap %s/%s, which allowed_label_domains would replace",
					o.where(), o.GetNamespace(), o.GetName()),
				hint: "Keep one of the two: remove the ConfigMap from the manifest, or remove allowed_label_domains.",
			}
		}
	}
	value := renderAllowedLabelDomains(domains)
	sum := sha256.Sum256([]byte(value))
	if err := unstructured.SetNestedField(dep.Object, hex.EncodeToString(sum[:]),
		"spec", "template", "metadata", "annotations", sandboxConfigAnnotation); err != nil {
		return objs, fmt.Errorf("%s: Deployment %q: %w", dep.where(), dep.GetName(), err)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      sandboxapi.ConfigMapName,
			"namespace": dep.GetNamespace(),
		},
		"data": map[string]any{sandboxapi.ConfigKeyAllowedLabelDomains: value},
	}}
	return append(objs, object{Unstructured: cm, Source: sandboxConfigSource, Doc: 1, Line: 1}), nil
}

// findControllerDeployment returns the Deployment named
// ControllerDeploymentName, or nil.
func findControllerDeployment(objs []object) *object {
	for i := range objs {
		if objs[i].GetKind() == "Deployment" && objs[i].GroupVersionKind().Group == "apps" && objs[i].GetName() == ControllerDeploymentName {
			return &objs[i]
		}
	}
	return nil
}

// checkMountsSandboxConfig checks that dep mounts the ConfigMap where the
// controller reads it (sandboxapi.MountsConfig).
func checkMountsSandboxConfig(dep *object) error {
	if sandboxapi.MountsConfig(dep.Object) {
		return nil
	}
	return sandboxConfigError{
		problem: fmt.Sprintf("%s: the controller Deployment %s/%s does not mount the ConfigMap %s at %s, where the "+
			"controller reads %s when it starts, so allowed_label_domains would never take effect",
			dep.where(), dep.GetNamespace(), dep.GetName(), sandboxapi.ConfigMapName, sandboxapi.ConfigMountPath,
			sandboxapi.ConfigKeyAllowedLabelDomains),
		hint: fmt.Sprintf("Upstream's releases mount it in the extensions controller only: every v0.5.x release's "+
			"extensions.yaml and sandbox-with-extensions.yaml do, the core-only sandbox.yaml and manifest.yaml "+
			"(extensions = false) do not. Install the release with its extensions, give a manifest whose controller "+
			"mounts the ConfigMap (a volume with configMap.name %q, optional, mounted at %s), or remove allowed_label_domains.",
			sandboxapi.ConfigMapName, sandboxapi.ConfigMountPath),
	}
}

// sandboxConfigError is a bundle allowed_label_domains cannot be added to:
// what is wrong, and what to do about it.
type sandboxConfigError struct{ problem, hint string }

func (e sandboxConfigError) Error() string { return e.problem + ".\n\n" + e.hint }

// isSandboxConfig says whether e is the ConfigMap allowed_label_domains
// renders.
func isSandboxConfig(e inventoryEntry) bool {
	return e.Kind == "ConfigMap" && e.APIVersion == "v1" && e.Name == sandboxapi.ConfigMapName
}
