package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodMetadata is the part of an object's metadata that the controller copies
// onto the pod it creates: labels and annotations only.
type PodMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// EmbeddedObjectMetadata is the metadata of an object created from a template
// (a PersistentVolumeClaim): a name plus labels and annotations.
type EmbeddedObjectMetadata struct {
	// Name of the created object. For volume claim templates this is the name
	// that pod volumes refer to.
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodTemplate is the blueprint of the single pod behind a sandbox.
type PodTemplate struct {
	// Spec is a full core/v1 PodSpec.
	// +required
	Spec corev1.PodSpec `json:"spec"`

	// Metadata carries the labels and annotations of the pod. Keys under
	// agents.x-k8s.io/ and extensions.agents.x-k8s.io/ are reserved for the
	// controller.
	// +optional
	Metadata PodMetadata `json:"metadata,omitzero"`
}

// PersistentVolumeClaimTemplate describes one PersistentVolumeClaim created
// for (and owned by) a sandbox.
type PersistentVolumeClaimTemplate struct {
	// Metadata names the claim; pod volumes refer to it by this name.
	// +optional
	Metadata EmbeddedObjectMetadata `json:"metadata,omitzero"`

	// +required
	Spec corev1.PersistentVolumeClaimSpec `json:"spec"`
}

// SandboxOperatingMode is what the user wants the sandbox to be doing. It is a
// desired state; whether it has been reached is reported by conditions.
// +kubebuilder:validation:Enum=Running;Suspended
type SandboxOperatingMode string

const (
	// OperatingModeRunning asks the controller to keep the pod (and the
	// Service, if requested) running.
	OperatingModeRunning SandboxOperatingMode = "Running"
	// OperatingModeSuspended asks the controller to delete the pod while
	// keeping the Sandbox object and its volume claims.
	OperatingModeSuspended SandboxOperatingMode = "Suspended"
)

// ShutdownPolicy says what happens to a Sandbox object once its shutdownTime
// has passed (the pod and Service are removed either way).
// +kubebuilder:validation:Enum=Delete;Retain
type ShutdownPolicy string

const (
	// ShutdownPolicyDelete deletes the Sandbox object after expiry.
	ShutdownPolicyDelete ShutdownPolicy = "Delete"
	// ShutdownPolicyRetain keeps the Sandbox object after expiry, with
	// Ready=False and reason SandboxExpired.
	ShutdownPolicyRetain ShutdownPolicy = "Retain"
)

// SandboxBlueprint is the workload description shared by Sandbox and
// SandboxTemplate (the extensions group embeds it too). Its fields are
// inlined into the surrounding spec.
type SandboxBlueprint struct {
	// PodTemplate describes the sandbox pod. Required.
	// +required
	PodTemplate PodTemplate `json:"podTemplate"`

	// VolumeClaimTemplates are the PVCs created for the sandbox. The list is
	// replaced as a whole on update; on a Sandbox it is immutable (see the
	// validation rule on SandboxSpec).
	// +optional
	// +listType=atomic
	VolumeClaimTemplates []PersistentVolumeClaimTemplate `json:"volumeClaimTemplates,omitempty"`

	// Service controls the headless Service named like the sandbox: true
	// creates it, false deletes it, unset keeps an existing one but creates none.
	// +optional
	Service *bool `json:"service,omitempty"`
}

// Lifecycle is the expiry of a Sandbox. Its fields are inlined into SandboxSpec.
type Lifecycle struct {
	// ShutdownTime is the RFC 3339 instant at which the sandbox expires.
	// Unset means never.
	// +kubebuilder:validation:Format="date-time"
	// +optional
	ShutdownTime *metav1.Time `json:"shutdownTime,omitempty"`

	// ShutdownPolicy decides the fate of the Sandbox object on expiry.
	// +kubebuilder:default=Retain
	// +optional
	ShutdownPolicy *ShutdownPolicy `json:"shutdownPolicy,omitempty"`
}

// SandboxSpec is the desired state of a Sandbox.
// +kubebuilder:validation:XValidation:rule="has(self.volumeClaimTemplates) == has(oldSelf.volumeClaimTemplates) && (!has(self.volumeClaimTemplates) || self.volumeClaimTemplates == oldSelf.volumeClaimTemplates)",message="volumeClaimTemplates is immutable"
type SandboxSpec struct {
	SandboxBlueprint `json:",inline"`

	// +optional
	Lifecycle `json:",inline"`

	// OperatingMode is Running (default) or Suspended.
	// +kubebuilder:default=Running
	// +optional
	OperatingMode SandboxOperatingMode `json:"operatingMode,omitempty"`
}

// SandboxStatus is the observed state of a Sandbox, written by the controller.
type SandboxStatus struct {
	// ServiceFQDN is the in-cluster DNS name of the headless Service.
	// +optional
	ServiceFQDN string `json:"serviceFQDN,omitempty"`

	// Service is the name of the headless Service, empty when there is none.
	// +optional
	Service string `json:"service,omitempty"`

	// Conditions: Ready, Suspended, PodScheduled, Finished.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Selector is the label selector (string form) of the sandbox pod.
	// +optional
	Selector string `json:"selector,omitempty"`

	// PodIPs are the pod's addresses; empty while there is no pod.
	// +optional
	PodIPs []string `json:"podIPs,omitempty"`

	// NodeName is the node the pod runs on; empty while there is no pod.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
}

// Sandbox is one isolated, stateful pod with a stable identity.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=sandbox
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Sandbox struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SandboxSpec `json:"spec"`
	// +optional
	Status SandboxStatus `json:"status,omitzero"`
}

// SandboxList is a list of Sandbox objects.
//
// +kubebuilder:object:root=true
type SandboxList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Sandbox `json:"items"`
}
