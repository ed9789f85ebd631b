// Package sandboxclaim implements agentsandbox_sandbox_claim and its data
// source: a SandboxClaim (extensions.agents.x-k8s.io/v1beta1) that takes one
// sandbox from a warm pool, for a long-lived agent session declared in
// Terraform.
//
// The package owns the schema and its plan-time validation (schema.go,
// validate.go), the conversion between attributes and the claim's spec and
// status (model.go), the CRUD over internal/object (resource.go) and the
// readiness wait, which ends at once on a reason the controller will not
// get past by itself (WarmPoolNotFound, InvalidMetadata, ...) and says what
// to change (wait.go).
//
// Which changes replace the claim follows what the controller does with
// them, not only what the API accepts. The API lets warmPoolRef and env be
// edited, but a claim that holds a sandbox keeps it: the pool is consulted
// and the variables are injected only when the sandbox is taken or
// cold-started. Changing either in the configuration therefore replaces the
// claim, so that the new value takes effect. An out-of-band edit of them is
// different: it is drift, and the apply puts the old value back in place
// without touching the sandbox. The last applied values live in the
// resource's private state to tell the two apart.
package sandboxclaim
