// Package v1beta1 holds the project's own Go types for the
// extensions.agents.x-k8s.io/v1beta1 API group of kubernetes-sigs/agent-sandbox:
// SandboxTemplate, SandboxWarmPool and SandboxClaim.
//
// Like the agents group (../../agents/v1beta1, whose SandboxBlueprint the
// template embeds), the types match what the upstream controller serves, JSON
// name for JSON name, and their kubebuilder markers are the source of the
// generated CRDs in ../../crds.
//
// +kubebuilder:object:generate=true
// +groupName=extensions.agents.x-k8s.io
package v1beta1
