package sandboxapi

import "strings"

// Reserved key prefixes. Labels and annotations under these prefixes belong to
// the controller: upstream refuses them in a pod template's metadata (and in a
// claim's additionalPodMetadata), so the provider refuses them at plan time.
const (
	ReservedPrefix           = "agents.x-k8s.io/"
	ReservedExtensionsPrefix = "extensions.agents.x-k8s.io/"
)

// IsReservedKey reports whether a label or annotation key lies under one of the
// controller's reserved prefixes. Like upstream it is a plain prefix test, so
// "api.agents.x-k8s.io/..." (used by the conversion webhook) is not reserved.
func IsReservedKey(key string) bool {
	return strings.HasPrefix(key, ReservedPrefix) || strings.HasPrefix(key, ReservedExtensionsPrefix)
}

// Label and annotation keys upstream's API packages do not declare (the
// others come from there: sigs.k8s.io/agent-sandbox/api/v1beta1 has
// SandboxWarmPoolLabel, SandboxTemplateRefHashLabel, SandboxLaunchTypeLabel,
// SandboxTemplateHashLabel, CreatedByLabel, SandboxAdoptableLabel,
// SandboxPodNameAnnotation, SandboxTemplateRefAnnotation and the propagated
// keys; extensions/api/v1beta1 has SandboxIDLabel, the claim UID, and
// AssignedSandboxNameAnnotation).
const (
	// LabelSandboxNameHash is on every pod and headless Service of a sandbox,
	// with value NameHash(sandbox name); the Service selects on it and the
	// controller only watches pods that carry it. Upstream declares it in
	// its controller package (sandboxLabel, controllers/sandbox_controller.go:52
	// at v1.0.3), which the provider does not import.
	LabelSandboxNameHash = "agents.x-k8s.io/sandbox-name-hash"
	// AnnotationSafeToEvict is the cluster autoscaler's annotation; warm pool
	// pods carry it with value "true" (while warm-pool eviction is enabled,
	// the default) and lose it on adoption
	// (extensions/controllers/sandboxwarmpool_controller.go:58 at v1.0.3).
	AnnotationSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"
)

// Annotations written by the v0.5.x conversion webhook to carry fields that
// exist in only one version across a round trip. They are controller-owned:
// the provider must never report them as drift.
const (
	AnnotationV1alpha1SandboxState         = "api.agents.x-k8s.io/v1alpha1-sandbox-state"
	AnnotationV1alpha1SandboxTemplateState = "api.agents.x-k8s.io/v1alpha1-sandboxtemplate-state"
	AnnotationV1alpha1SandboxWarmPoolState = "api.agents.x-k8s.io/v1alpha1-sandboxwarmpool-state"
	AnnotationV1alpha1SandboxClaimState    = "api.agents.x-k8s.io/v1alpha1-sandboxclaim-state"
	AnnotationV1beta1VCTPolicy             = "api.agents.x-k8s.io/v1beta1-volume-claim-templates-policy"
)

// The sandbox router's pod label: upstream's managed NetworkPolicy admits
// ingress only from pods labelled app=sandbox-router
// (extensions/controllers/sandboxtemplate_controller.go:202 at v1.0.3), and
// the claim controller refuses that label on a claim's pods
// (sandboxclaim_controller.go:1541), so that no sandbox can pass for the
// router.
const (
	RouterLabelKey   = "app"
	RouterLabelValue = "sandbox-router"
)
