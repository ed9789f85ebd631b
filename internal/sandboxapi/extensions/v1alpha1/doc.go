// Package v1alpha1 describes the deprecated extensions.agents.x-k8s.io/v1alpha1
// versions of SandboxTemplate, SandboxWarmPool and SandboxClaim, which
// agent-sandbox v0.5.x still serves through its conversion webhook and v1.0
// drops.
//
// Like ../../agents/v1alpha1 it exists for the generated v1alpha1 schemas of the
// offline v0.5.x bundles and for tests; the provider only speaks v1beta1.
//
// +kubebuilder:object:generate=true
// +groupName=extensions.agents.x-k8s.io
package v1alpha1
