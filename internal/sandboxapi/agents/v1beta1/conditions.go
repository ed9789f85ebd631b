package v1beta1

// ConditionType names a condition in SandboxStatus.Conditions.
type ConditionType string

// String returns the condition type as a plain string, the form
// metav1.Condition.Type uses.
func (c ConditionType) String() string { return string(c) }

// Condition types the controller sets on a Sandbox.
const (
	// ConditionReady is True when the pod is Running and Ready with an IP and,
	// if a Service is required, the Service exists. It is the authoritative
	// readiness signal; there is no separate "Running" condition.
	ConditionReady ConditionType = "Ready"
	// ConditionSuspended reports the progress of operatingMode=Suspended. The
	// controller may leave it behind after resuming, so do not infer the
	// operating mode from its presence.
	ConditionSuspended ConditionType = "Suspended"
	// ConditionPodScheduled copies the pod's PodScheduled condition; absent
	// while there is no pod.
	ConditionPodScheduled ConditionType = "PodScheduled"
	// ConditionFinished is set (True) once the pod has Succeeded or Failed.
	ConditionFinished ConditionType = "Finished"
)

// Reasons of the Ready condition.
const (
	ReasonDependenciesReady    = "DependenciesReady"    // Ready=True
	ReasonDependenciesNotReady = "DependenciesNotReady" // pod or Service still coming up
	ReasonMultiplePods         = "MultiplePods"         // more than one pod is controlled by the sandbox
	ReasonSandboxSuspended     = "SandboxSuspended"     // operatingMode is Suspended
	ReasonSandboxExpired       = "SandboxExpired"       // shutdownTime passed (policy Retain)
	ReasonReconcilerError      = "ReconcilerError"      // the controller hit an error
	// ReasonPodSucceeded and ReasonPodFailed are used by Ready (False) and by
	// Finished (True) when the pod reached a terminal phase.
	ReasonPodSucceeded = "PodSucceeded"
	ReasonPodFailed    = "PodFailed"
)

// Reasons of the Suspended condition.
const (
	ReasonPodTerminated   = "PodTerminated"   // Suspended=True: the pod is gone
	ReasonPodTerminating  = "PodTerminating"  // Suspended=False: the pod is still terminating
	ReasonPodNotOwned     = "PodNotOwned"     // Suspended=False: a pod with the sandbox's name is not ours
	ReasonNotSuspended    = "NotSuspended"    // Suspended=False: the sandbox is running
	ReasonPodStateUnknown = "PodStateUnknown" // Suspended=Unknown: the pod could not be read
	// ReasonPodNotTerminated is the older spelling of ReasonPodTerminating;
	// controllers before v0.5 wrote it and objects may still carry it.
	ReasonPodNotTerminated = "PodNotTerminated"
)

// Reasons of the PodScheduled condition that the controller sets itself (it
// otherwise copies the pod condition's reason verbatim).
const (
	ReasonPodScheduled         = "PodScheduled"         // scheduled, pod condition carries no reason
	ReasonPodSchedulingUnknown = "PodSchedulingUnknown" // the pod has no PodScheduled condition yet
)
