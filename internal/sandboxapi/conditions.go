package sandboxapi

// Reasons the controllers write as string literals, which upstream's API
// packages therefore do not declare. Every other condition type and reason
// comes from upstream's API packages: the Sandbox's in
// sigs.k8s.io/agent-sandbox/api/v1beta1 (SandboxConditionReady,
// SandboxReasonExpired, ...); a SandboxClaim's conditions use the same types
// (its Ready is SandboxConditionReady, forwarded from its sandbox or set by
// the claim controller), and of its reasons upstream declares
// extensions/api/v1beta1.ClaimExpiredReason and reuses SandboxReasonExpired.

// SandboxReasonReconcilerError is Ready=False on a Sandbox whose controller
// hit an error (controllers/sandbox_controller.go:610 at v1.0.3).
const SandboxReasonReconcilerError = "ReconcilerError"

// Reasons the claim controller sets on a SandboxClaim's Ready condition
// (extensions/controllers/sandboxclaim_controller.go:692-832 at v1.0.3).
// When the sandbox exists and has a Ready condition, that condition (and its
// reason, e.g. DependenciesReady) is forwarded instead.
const (
	ClaimReasonTemplateNotFound          = "TemplateNotFound"
	ClaimReasonWarmPoolNotFound          = "WarmPoolNotFound"
	ClaimReasonAdoptionConflict          = "AdoptionConflict"     // transient: another claim raced for the same sandbox
	ClaimReasonSandboxCreatePending      = "SandboxCreatePending" // transient: waiting for the cache to show the new sandbox
	ClaimReasonInvalidMetadata           = "InvalidMetadata"      // additionalPodMetadata rejected
	ClaimReasonEnvVarsInjectionRejected  = "EnvVarsInjectionRejected"
	ClaimReasonVolumeClaimTemplatesError = "VolumeClaimTemplatesError"
	ClaimReasonSandboxMissing            = "SandboxMissing"
	ClaimReasonSandboxNotReady           = "SandboxNotReady"
	ClaimReasonReconcilerError           = "ReconcilerError"
)
