// Package sandbox implements agentsandbox_sandbox and its data source: a
// Sandbox (agents.x-k8s.io/v1beta1), one long-lived, isolated, stateful pod
// with a stable identity, optional volumes and a headless Service.
//
// The package owns the schema (schema.go), the conversion between the
// attributes and the Sandbox's spec and status (model.go), the CRUD over
// internal/object (resource.go) and the wait for the Ready or Suspended
// condition (wait.go). The blueprint it shares with SandboxTemplate (pod
// template, volume claim templates, service) comes from packages
// podtemplate and sandboxtemplate, so both resources spell it the same way.
//
// Suspending and resuming are in-place updates of operating_mode; the wait
// then follows the Suspended condition instead of Ready. Volume claim
// templates are immutable in the API and force a replacement.
package sandbox
