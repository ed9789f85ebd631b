// Package warmpool implements agentsandbox_warm_pool and its data source: a
// SandboxWarmPool (extensions.agents.x-k8s.io/v1beta1), the pre-started
// sandboxes of one SandboxTemplate that claims take in well under a second
// instead of waiting for a cold start.
//
// The package owns the schema and its plan-time validation (schema.go), the
// conversion between attributes and the pool's spec and status (model.go),
// the CRUD over internal/object (resource.go) and the readiness wait, whose
// timeout names the pool's sandboxes that are not ready and why (wait.go).
//
// Two things are particular to pools. The replica count is the scale
// subresource's spec path, so it may belong to an autoscaler instead of the
// configuration: with replicas_managed_externally the provider neither
// writes nor compares it, and hands its ownership over on the way. And the
// template a pool names is checked before the pool is written, because the
// API has no condition that would say a pool waits for a missing template.
package warmpool
