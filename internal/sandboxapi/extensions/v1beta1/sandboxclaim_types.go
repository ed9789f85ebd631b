package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
)

// ShutdownPolicy says what happens to a SandboxClaim once it expires. The
// claim's Sandbox, pod and Service are removed in every case.
// +kubebuilder:validation:Enum=Delete;DeleteForeground;Retain
type ShutdownPolicy string

const (
	// ShutdownPolicyDelete deletes the claim (and with it the sandbox).
	ShutdownPolicyDelete ShutdownPolicy = "Delete"
	// ShutdownPolicyDeleteForeground deletes the claim with foreground
	// cascading, so the claim stays visible until its sandbox is gone.
	ShutdownPolicyDeleteForeground ShutdownPolicy = "DeleteForeground"
	// ShutdownPolicyRetain (default) keeps the claim with Ready=False, reason ClaimExpired.
	ShutdownPolicyRetain ShutdownPolicy = "Retain"
)

// Lifecycle is the expiry of a SandboxClaim.
type Lifecycle struct {
	// ShutdownTime is the RFC 3339 instant at which the claim expires.
	// +kubebuilder:validation:Format="date-time"
	// +optional
	ShutdownTime *metav1.Time `json:"shutdownTime,omitempty"`

	// TTLSecondsAfterFinished bounds how long a claim whose sandbox finished
	// is kept, counted from the Finished condition's transition time.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// +kubebuilder:default=Retain
	// +optional
	ShutdownPolicy ShutdownPolicy `json:"shutdownPolicy,omitempty"`
}

// SandboxWarmPoolRef names a SandboxWarmPool in the same namespace.
type SandboxWarmPoolRef struct {
	// +required
	Name string `json:"name"`
}

// EnvVar is an environment variable a claim injects into its sandbox.
type EnvVar struct {
	// +required
	Name string `json:"name"`
	// +required
	Value string `json:"value"`
	// ContainerName targets one container; empty means the first one.
	// +optional
	ContainerName string `json:"containerName,omitempty"`
}

// SandboxClaimSpec is the desired state of a SandboxClaim.
type SandboxClaimSpec struct {
	// WarmPoolRef names the pool to take a sandbox from (the template comes
	// from the pool).
	// +required
	WarmPoolRef SandboxWarmPoolRef `json:"warmPoolRef"`

	// +optional
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`

	// AdditionalPodMetadata adds labels and annotations to the sandbox pod.
	// +optional
	AdditionalPodMetadata agentsv1beta1.PodMetadata `json:"additionalPodMetadata,omitzero"`

	// Env injects variables; setting it forces a cold start (the template's
	// envVarsInjectionPolicy must allow it).
	// +optional
	// +listType=atomic
	Env []EnvVar `json:"env,omitempty"`

	// VolumeClaimTemplates adds PVCs; setting it forces a cold start (the
	// template's volumeClaimTemplatesPolicy must allow it).
	// +optional
	// +listType=atomic
	VolumeClaimTemplates []agentsv1beta1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplates,omitempty"`
}

// ClaimedSandboxStatus identifies the sandbox a claim was given.
type ClaimedSandboxStatus struct {
	// Name of the Sandbox, in the claim's namespace.
	// +optional
	Name string `json:"name,omitempty"`
	// PodIPs mirrors the Sandbox's status.podIPs.
	// +optional
	PodIPs []string `json:"podIPs,omitempty"`
	// ServiceFQDN mirrors the Sandbox's status.serviceFQDN: the DNS name of
	// its headless Service, empty while it has none. New in v1.0.1
	// (extensions/api/v1beta1/sandboxclaim_types.go:165-171 at v1.0.1 and
	// v1.0.3), set together with the name and pod IPs from the same read of
	// the sandbox (extensions/controllers/sandboxclaim_controller.go:850-861
	// at v1.0.1, :848-859 at v1.0.3); v0.5.x have only name and podIPs
	// (sandboxclaim_types.go:149-161 at v0.5.6).
	// +optional
	ServiceFQDN string `json:"serviceFQDN,omitempty"`
}

// SandboxClaimStatus is the observed state of a SandboxClaim.
type SandboxClaimStatus struct {
	// Conditions: Ready and Finished.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Sandbox is the sandbox bound to the claim.
	// +optional
	Sandbox ClaimedSandboxStatus `json:"sandbox,omitzero"`
}

// SandboxClaim hands one sandbox (warm from a pool when possible) to a user.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=sandboxclaim
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Sandbox",type="string",JSONPath=".status.sandbox.name"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SandboxClaim struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SandboxClaimSpec `json:"spec"`
	// +optional
	Status SandboxClaimStatus `json:"status,omitzero"`
}

// SandboxClaimList is a list of SandboxClaim objects.
//
// +kubebuilder:object:root=true
type SandboxClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SandboxClaim `json:"items"`
}
