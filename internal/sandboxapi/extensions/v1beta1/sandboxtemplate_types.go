package v1beta1

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
)

// NetworkPolicyManagement says whether the controller owns the template's
// shared NetworkPolicy.
// +kubebuilder:validation:Enum=Managed;Unmanaged
type NetworkPolicyManagement string

const (
	// NetworkPolicyManaged (default): the controller keeps one NetworkPolicy
	// named "<template>-network-policy", built from spec.networkPolicy or,
	// when that is absent, from its secure default.
	NetworkPolicyManaged NetworkPolicyManagement = "Managed"
	// NetworkPolicyUnmanaged: the controller creates no NetworkPolicy and
	// ignores spec.networkPolicy.
	NetworkPolicyUnmanaged NetworkPolicyManagement = "Unmanaged"
)

// EnvVarsInjectionPolicy says whether claims may set environment variables on
// sandboxes created from the template.
// +kubebuilder:validation:Enum=Allowed;Overrides;Disallowed
type EnvVarsInjectionPolicy string

const (
	// EnvVarsAllowed: claims may add variables the template does not define.
	EnvVarsAllowed EnvVarsInjectionPolicy = "Allowed"
	// EnvVarsOverrides: claims may add variables and override the template's.
	EnvVarsOverrides EnvVarsInjectionPolicy = "Overrides"
	// EnvVarsDisallowed (default): a claim with spec.env is rejected.
	EnvVarsDisallowed EnvVarsInjectionPolicy = "Disallowed"
)

// VolumeClaimTemplatesPolicy says whether claims may add or replace volume
// claim templates.
// +kubebuilder:validation:Enum=Disallowed;Allowed;Overrides
type VolumeClaimTemplatesPolicy string

const (
	// VolumeClaimTemplatesDisallowed (default): a claim with volume claim templates is rejected.
	VolumeClaimTemplatesDisallowed VolumeClaimTemplatesPolicy = "Disallowed"
	// VolumeClaimTemplatesAllowed: claims may add templates with new names.
	VolumeClaimTemplatesAllowed VolumeClaimTemplatesPolicy = "Allowed"
	// VolumeClaimTemplatesOverrides: claims may add templates and replace the template's.
	VolumeClaimTemplatesOverrides VolumeClaimTemplatesPolicy = "Overrides"
)

// NetworkPolicySpec is the restricted part of a NetworkPolicy spec that a
// template may set; the controller fills in the pod selector and policy
// types. An empty list denies all traffic in that direction.
type NetworkPolicySpec struct {
	// +optional
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
	// +optional
	Egress []networkingv1.NetworkPolicyEgressRule `json:"egress,omitempty"`
}

// SandboxTemplateSpec is the desired state of a SandboxTemplate: the shared
// sandbox blueprint plus the template-only policies.
type SandboxTemplateSpec struct {
	agentsv1beta1.SandboxBlueprint `json:",inline"`

	// NetworkPolicy holds custom rules for the managed NetworkPolicy. Unset
	// with management Managed means the controller's secure default.
	// +optional
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`

	// +kubebuilder:default=Managed
	// +optional
	NetworkPolicyManagement NetworkPolicyManagement `json:"networkPolicyManagement,omitempty"`

	// +kubebuilder:default=Disallowed
	// +optional
	EnvVarsInjectionPolicy EnvVarsInjectionPolicy `json:"envVarsInjectionPolicy,omitempty"`

	// +kubebuilder:default=Disallowed
	// +optional
	VolumeClaimTemplatesPolicy VolumeClaimTemplatesPolicy `json:"volumeClaimTemplatesPolicy,omitempty"`
}

// SandboxTemplate is a reusable, hardened sandbox blueprint. It has no status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=sandboxtemplate
type SandboxTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SandboxTemplateSpec `json:"spec"`
}

// SandboxTemplateList is a list of SandboxTemplate objects.
//
// +kubebuilder:object:root=true
type SandboxTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SandboxTemplate `json:"items"`
}
