// Package v1alpha1 describes the deprecated agents.x-k8s.io/v1alpha1 version of
// Sandbox, which agent-sandbox v0.5.x still serves (through its conversion
// webhook) and v1.0 no longer does.
//
// It exists so controller-gen can generate the v1alpha1 schema that the offline
// v0.5.x release bundles (../../bundles) serve next to v1beta1, and so tests can
// decode v1alpha1 objects. The provider itself only speaks v1beta1; do not
// build new features on this package.
//
// +kubebuilder:object:generate=true
// +groupName=agents.x-k8s.io
package v1alpha1
