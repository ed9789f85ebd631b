// Package v1beta1 holds the project's own Go types for the agents.x-k8s.io/v1beta1
// API group of kubernetes-sigs/agent-sandbox: the Sandbox kind.
//
// The types are written to match, field for field and JSON name for JSON name,
// what the upstream controller serves (v0.5.x and v1.0.x). The kubebuilder markers
// on them are the source of the generated CRD in ../../crds; change a marker,
// then run `go generate ./internal/sandboxapi/...`.
//
// +kubebuilder:object:generate=true
// +groupName=agents.x-k8s.io
package v1beta1
