package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SandboxTemplateRef names a SandboxTemplate in the same namespace.
type SandboxTemplateRef struct {
	// +required
	Name string `json:"name"`
}

// UpdateStrategyType says how a pool replaces unclaimed sandboxes that no
// longer match their template's blueprint.
// +kubebuilder:validation:Enum=Recreate;OnReplenish
type UpdateStrategyType string

const (
	// UpdateStrategyRecreate deletes stale unclaimed sandboxes at once.
	UpdateStrategyRecreate UpdateStrategyType = "Recreate"
	// UpdateStrategyOnReplenish (default) replaces a stale sandbox only when
	// it is deleted or claimed.
	UpdateStrategyOnReplenish UpdateStrategyType = "OnReplenish"
)

// SandboxWarmPoolUpdateStrategy wraps the update strategy type.
type SandboxWarmPoolUpdateStrategy struct {
	// +kubebuilder:default=OnReplenish
	// +optional
	Type UpdateStrategyType `json:"type,omitempty"`
}

// SandboxWarmPoolSpec is the desired state of a SandboxWarmPool.
type SandboxWarmPoolSpec struct {
	// Replicas is the number of pre-started sandboxes to keep. It is the
	// scale subresource's spec path, so an HPA may own it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// TemplateRef names the SandboxTemplate the pool's sandboxes come from.
	// +required
	TemplateRef SandboxTemplateRef `json:"sandboxTemplateRef"`

	// UpdateStrategy defaults to OnReplenish when unset.
	// +optional
	UpdateStrategy *SandboxWarmPoolUpdateStrategy `json:"updateStrategy,omitempty"`
}

// SandboxWarmPoolStatus is the observed state of a SandboxWarmPool. The pool
// has no conditions: readiness is readyReplicas against spec.replicas.
type SandboxWarmPoolStatus struct {
	// Replicas is the number of sandboxes currently in the pool.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is how many of them are Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Selector selects the pool's sandboxes, e.g.
	// "agents.x-k8s.io/warm-pool-sandbox=<hash of the pool name>".
	// +optional
	Selector string `json:"selector,omitempty"`

	// ObservedGeneration is the pool generation the controller last acted on.
	// Template edits do not bump the pool's generation.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// SandboxWarmPool keeps a number of sandboxes started from a template, ready
// to be handed out to claims.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced,shortName=swp
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type SandboxWarmPool struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SandboxWarmPoolSpec `json:"spec"`
	// +optional
	Status SandboxWarmPoolStatus `json:"status,omitzero"`
}

// SandboxWarmPoolList is a list of SandboxWarmPool objects.
//
// +kubebuilder:object:root=true
type SandboxWarmPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SandboxWarmPool `json:"items"`
}
