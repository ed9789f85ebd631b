package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodMetadata holds the labels and annotations copied onto the sandbox pod.
type PodMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// EmbeddedObjectMetadata is the metadata of a PVC created from a template.
type EmbeddedObjectMetadata struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodTemplate is the blueprint of the sandbox pod.
type PodTemplate struct {
	// +required
	Spec corev1.PodSpec `json:"spec"`
	// +optional
	Metadata PodMetadata `json:"metadata,omitzero"`
}

// PersistentVolumeClaimTemplate describes one PVC created for the sandbox.
type PersistentVolumeClaimTemplate struct {
	// +optional
	Metadata EmbeddedObjectMetadata `json:"metadata,omitzero"`
	// +required
	Spec corev1.PersistentVolumeClaimSpec `json:"spec"`
}

// ShutdownPolicy says what happens to the Sandbox object on expiry.
// +kubebuilder:validation:Enum=Delete;Retain
type ShutdownPolicy string

// Lifecycle is the expiry of a Sandbox, inlined into its spec.
type Lifecycle struct {
	// +kubebuilder:validation:Format="date-time"
	// +optional
	ShutdownTime *metav1.Time `json:"shutdownTime,omitempty"`
	// +kubebuilder:default=Retain
	// +optional
	ShutdownPolicy *ShutdownPolicy `json:"shutdownPolicy,omitempty"`
}

// SandboxSpec is the v1alpha1 desired state. Instead of v1beta1's
// operatingMode it has replicas (1 running, 0 suspended).
type SandboxSpec struct {
	// +required
	PodTemplate PodTemplate `json:"podTemplate"`

	// +optional
	// +listType=atomic
	VolumeClaimTemplates []PersistentVolumeClaimTemplate `json:"volumeClaimTemplates,omitempty"`

	// +optional
	Lifecycle `json:",inline"`

	// Replicas is 1 (running, default) or 0 (suspended).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// +optional
	Service *bool `json:"service,omitempty"`
}

// SandboxStatus is the v1alpha1 observed state.
type SandboxStatus struct {
	// +optional
	ServiceFQDN string `json:"serviceFQDN,omitempty"`
	// +optional
	Service string `json:"service,omitempty"`
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Replicas is the number of pods (0 or 1), for the scale subresource.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	Selector string `json:"selector,omitempty"`
	// +optional
	PodIPs []string `json:"podIPs,omitempty"`
}

// Sandbox is the deprecated v1alpha1 form of a sandbox.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced,shortName=sandbox
// +kubebuilder:deprecatedversion:warning="agents.x-k8s.io/v1alpha1 Sandbox is deprecated; use agents.x-k8s.io/v1beta1 Sandbox instead"
type Sandbox struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec SandboxSpec `json:"spec"`
	// +optional
	Status SandboxStatus `json:"status,omitzero"`
}

// SandboxList is a list of v1alpha1 Sandbox objects.
//
// +kubebuilder:object:root=true
type SandboxList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Sandbox `json:"items"`
}
