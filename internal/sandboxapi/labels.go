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

// Label keys the controller puts on sandboxes, pods and Services.
const (
	// LabelSandboxNameHash is on every pod and headless Service of a sandbox,
	// with value NameHash(sandbox name); the Service selects on it and the
	// controller only watches pods that carry it.
	LabelSandboxNameHash = "agents.x-k8s.io/sandbox-name-hash"
	// LabelWarmPoolSandbox marks a sandbox (and its pod) as a member of a warm
	// pool, with value NameHash(pool name). It is removed on adoption.
	LabelWarmPoolSandbox = "agents.x-k8s.io/warm-pool-sandbox"
	// LabelSandboxTemplateRefHash is NameHash(template name) on sandboxes and
	// pods made from a template; the template's managed NetworkPolicy selects
	// pods by it.
	LabelSandboxTemplateRefHash = "agents.x-k8s.io/sandbox-template-ref-hash"
	// LabelClaimUID is the UID of the SandboxClaim that owns a sandbox and its pod.
	LabelClaimUID = "agents.x-k8s.io/claim-uid"
	// LabelLaunchType is LaunchTypeCold or LaunchTypeWarm on claimed sandboxes.
	LabelLaunchType = "agents.x-k8s.io/launch-type"
	// LabelSandboxTemplateHash is a hash of the blueprint a pool sandbox was
	// built from; the pool compares it to detect stale sandboxes.
	LabelSandboxTemplateHash = "agents.x-k8s.io/sandbox-template-hash"
	// LabelSandboxPodTemplateHash is the pre-v0.5 name of LabelSandboxTemplateHash,
	// still found on older objects.
	LabelSandboxPodTemplateHash = "agents.x-k8s.io/sandbox-pod-template-hash"
	// LabelCreatedBy names the component that created an object.
	LabelCreatedBy = "agents.x-k8s.io/created-by"
	// LabelAdoptable authorizes a sandbox to adopt an existing unowned pod or Service.
	LabelAdoptable = "agents.x-k8s.io/adoptable"
)

// Values of LabelLaunchType.
const (
	LaunchTypeCold = "cold" // created for the claim
	LaunchTypeWarm = "warm" // taken from a warm pool
)

// Annotation keys the controller reads and writes.
const (
	// AnnotationPodName on a Sandbox names its pod when the pod was adopted
	// from a warm pool (and so is not named like the sandbox).
	AnnotationPodName = "agents.x-k8s.io/pod-name"
	// AnnotationSandboxTemplateRef on a Sandbox names the template it came from.
	AnnotationSandboxTemplateRef = "agents.x-k8s.io/sandbox-template-ref"
	// AnnotationPropagatedLabels and AnnotationPropagatedAnnotations on a pod
	// list (comma-separated) the keys copied from the sandbox's pod template,
	// so the controller can remove them again.
	AnnotationPropagatedLabels      = "agents.x-k8s.io/propagated-labels"
	AnnotationPropagatedAnnotations = "agents.x-k8s.io/propagated-annotations"
	// AnnotationSandboxName on a SandboxClaim names the sandbox it was given.
	// (Before v0.5 this was a label with the same key.)
	AnnotationSandboxName = "agents.x-k8s.io/sandbox-name"
	// AnnotationSafeToEvict is the cluster autoscaler's annotation; warm pool
	// pods carry it with value "true" (while warm-pool eviction is enabled,
	// the default) and lose it on adoption.
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
