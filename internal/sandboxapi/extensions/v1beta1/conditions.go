package v1beta1

// Condition types on a SandboxClaim. They use the same names as the Sandbox
// conditions they mirror.
const (
	// ClaimConditionReady is the claim's readiness: the sandbox's Ready
	// condition forwarded, or False with one of the claim reasons below.
	ClaimConditionReady = "Ready"
	// ClaimConditionFinished is copied from the sandbox once its pod finished.
	ClaimConditionFinished = "Finished"
)

// Reasons the claim controller sets on the claim's Ready condition. When the
// sandbox exists and has a Ready condition, that condition (and its reason,
// e.g. DependenciesReady) is forwarded instead.
const (
	ReasonTemplateNotFound          = "TemplateNotFound"
	ReasonWarmPoolNotFound          = "WarmPoolNotFound"
	ReasonAdoptionConflict          = "AdoptionConflict"     // transient: another claim raced for the same sandbox
	ReasonSandboxCreatePending      = "SandboxCreatePending" // transient: waiting for the cache to show the new sandbox
	ReasonInvalidMetadata           = "InvalidMetadata"      // additionalPodMetadata rejected
	ReasonEnvVarsInjectionRejected  = "EnvVarsInjectionRejected"
	ReasonVolumeClaimTemplatesError = "VolumeClaimTemplatesError"
	ReasonClaimExpired              = "ClaimExpired" // also the reason of the expiry event
	ReasonSandboxMissing            = "SandboxMissing"
	ReasonSandboxExpired            = "SandboxExpired" // the sandbox expired on its own
	ReasonSandboxNotReady           = "SandboxNotReady"
	ReasonReconcilerError           = "ReconcilerError"
)
