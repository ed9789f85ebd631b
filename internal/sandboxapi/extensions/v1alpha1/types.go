package v1alpha1

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1alpha1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1alpha1"
)

// --- SandboxTemplate ---

// NetworkPolicyManagement is Managed or Unmanaged.
// +kubebuilder:validation:Enum=Managed;Unmanaged
type NetworkPolicyManagement string

// EnvVarsInjectionPolicy is Allowed, Overrides or Disallowed.
// +kubebuilder:validation:Enum=Allowed;Overrides;Disallowed
type EnvVarsInjectionPolicy string

// NetworkPolicySpec holds the template's custom NetworkPolicy rules.
type NetworkPolicySpec struct {
	// +optional
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
	// +optional
	Egress []networkingv1.NetworkPolicyEgressRule `json:"egress,omitempty"`
}

// SandboxTemplateSpec is the v1alpha1 template: no volumeClaimTemplatesPolicy,
// and the blueprint fields are spelled out rather than shared.
type SandboxTemplateSpec struct {
	// +required
	PodTemplate agentsv1alpha1.PodTemplate `json:"podTemplate"`
	// +optional
	// +listType=atomic
	VolumeClaimTemplates []agentsv1alpha1.PersistentVolumeClaimTemplate `json:"volumeClaimTemplates,omitempty"`
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`
	// +kubebuilder:default=Managed
	// +optional
	NetworkPolicyManagement NetworkPolicyManagement `json:"networkPolicyManagement,omitempty"`
	// +kubebuilder:default=Disallowed
	// +optional
	EnvVarsInjectionPolicy EnvVarsInjectionPolicy `json:"envVarsInjectionPolicy,omitempty"`
	// +optional
	Service *bool `json:"service,omitempty"`
}

// SandboxTemplate is the deprecated v1alpha1 form of a template.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sandboxtemplate
// +kubebuilder:deprecatedversion:warning="extensions.agents.x-k8s.io/v1alpha1 SandboxTemplate is deprecated; use extensions.agents.x-k8s.io/v1beta1 SandboxTemplate instead"
type SandboxTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec SandboxTemplateSpec `json:"spec"`
}

// SandboxTemplateList is a list of v1alpha1 SandboxTemplate objects.
//
// +kubebuilder:object:root=true
type SandboxTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SandboxTemplate `json:"items"`
}

// --- SandboxWarmPool ---

// SandboxTemplateRef names a SandboxTemplate.
type SandboxTemplateRef struct {
	// +required
	Name string `json:"name"`
}

// UpdateStrategyType is Recreate or OnReplenish.
// +kubebuilder:validation:Enum=Recreate;OnReplenish
type UpdateStrategyType string

// SandboxWarmPoolUpdateStrategy wraps the update strategy type.
type SandboxWarmPoolUpdateStrategy struct {
	// +kubebuilder:default=OnReplenish
	// +optional
	Type UpdateStrategyType `json:"type,omitempty"`
}

// SandboxWarmPoolSpec is the v1alpha1 pool: replicas is required and has no default.
type SandboxWarmPoolSpec struct {
	// +kubebuilder:validation:Minimum=0
	// +required
	Replicas int32 `json:"replicas"`
	// +required
	TemplateRef SandboxTemplateRef `json:"sandboxTemplateRef"`
	// +optional
	UpdateStrategy *SandboxWarmPoolUpdateStrategy `json:"updateStrategy,omitempty"`
}

// SandboxWarmPoolStatus is the v1alpha1 pool status (no observedGeneration).
type SandboxWarmPoolStatus struct {
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +optional
	Selector string `json:"selector,omitempty"`
}

// SandboxWarmPool is the deprecated v1alpha1 form of a warm pool.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced,shortName=swp
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:deprecatedversion:warning="extensions.agents.x-k8s.io/v1alpha1 SandboxWarmPool is deprecated; use extensions.agents.x-k8s.io/v1beta1 SandboxWarmPool instead"
type SandboxWarmPool struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec SandboxWarmPoolSpec `json:"spec"`
	// +optional
	Status SandboxWarmPoolStatus `json:"status,omitzero"`
}

// SandboxWarmPoolList is a list of v1alpha1 SandboxWarmPool objects.
//
// +kubebuilder:object:root=true
type SandboxWarmPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SandboxWarmPool `json:"items"`
}

// --- SandboxClaim ---

// ShutdownPolicy is Delete, DeleteForeground or Retain.
// +kubebuilder:validation:Enum=Delete;DeleteForeground;Retain
type ShutdownPolicy string

// Lifecycle is the expiry of a v1alpha1 claim.
type Lifecycle struct {
	// +kubebuilder:validation:Format="date-time"
	// +optional
	ShutdownTime *metav1.Time `json:"shutdownTime,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// +kubebuilder:default=Retain
	// +optional
	ShutdownPolicy ShutdownPolicy `json:"shutdownPolicy,omitempty"`
}

// WarmPoolPolicy is "none", "default" or the name of one pool.
type WarmPoolPolicy string

// EnvVar is an environment variable a claim injects.
type EnvVar struct {
	// +required
	Name string `json:"name"`
	// +required
	Value string `json:"value"`
	// +optional
	ContainerName string `json:"containerName,omitempty"`
}

// SandboxClaimSpec is the v1alpha1 claim: it names a template (not a pool)
// and picks a pool through the warmpool policy.
type SandboxClaimSpec struct {
	// +required
	TemplateRef SandboxTemplateRef `json:"sandboxTemplateRef"`
	// +optional
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`
	// +kubebuilder:default=default
	// +optional
	WarmPool *WarmPoolPolicy `json:"warmpool,omitempty"`
	// +optional
	AdditionalPodMetadata agentsv1alpha1.PodMetadata `json:"additionalPodMetadata,omitzero"`
	// +optional
	// +listType=atomic
	Env []EnvVar `json:"env,omitempty"`
}

// ClaimedSandboxStatus identifies the sandbox a claim was given.
type ClaimedSandboxStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	PodIPs []string `json:"podIPs,omitempty"`
}

// SandboxClaimStatus is the v1alpha1 claim status.
type SandboxClaimStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Sandbox ClaimedSandboxStatus `json:"sandbox,omitzero"`
}

// SandboxClaim is the deprecated v1alpha1 form of a claim.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=sandboxclaim
// +kubebuilder:deprecatedversion:warning="extensions.agents.x-k8s.io/v1alpha1 SandboxClaim is deprecated; use extensions.agents.x-k8s.io/v1beta1 SandboxClaim instead"
type SandboxClaim struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec SandboxClaimSpec `json:"spec"`
	// +optional
	Status SandboxClaimStatus `json:"status,omitzero"`
}

// SandboxClaimList is a list of v1alpha1 SandboxClaim objects.
//
// +kubebuilder:object:root=true
type SandboxClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SandboxClaim `json:"items"`
}
