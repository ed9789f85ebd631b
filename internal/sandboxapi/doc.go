// Package sandboxapi is what the provider knows of the kubernetes-sigs/agent-sandbox
// API beyond upstream's own Go types.
//
// The types themselves are upstream's: sigs.k8s.io/agent-sandbox/api/v1beta1
// (Sandbox, group agents.x-k8s.io) and
// sigs.k8s.io/agent-sandbox/extensions/api/v1beta1 (SandboxTemplate,
// SandboxWarmPool, SandboxClaim, group extensions.agents.x-k8s.io), at the
// version go.mod pins (v1.0.3). They are the source of truth for field and
// JSON names, enum values, condition types and reasons, and the label and
// annotation keys they declare; the provider decodes every object into them.
// The v1.0.3 types know every field the v1beta1 schema of each supported
// release serves (v0.5.0 on; TestUpstreamTypesCoverEveryRelease checks it
// against each release's CRDs in package bundles), so objects of older
// releases decode into them with nothing lost. Only the two API packages are
// imported: they depend on k8s.io/api and k8s.io/apimachinery alone
// (TestProviderImportsOnlyUpstreamAPI).
//
// What this package adds, because upstream's API packages do not have it:
//
//   - resource names, GVRs, GVKs, list kinds and CRD names of the four kinds
//     (api.go), and AddToScheme for both groups together: upstream's
//     controllers reach objects through controller-runtime's typed client,
//     which needs none of them, while the provider uses a dynamic client;
//   - the condition reasons the controllers write as string literals
//     (conditions.go);
//   - the label and annotation keys declared only in upstream's controller
//     packages or not at all, the reserved key prefixes, and the v0.5.x
//     conversion webhook's annotations (labels.go); [NameHash], the FNV-1a
//     label value the controller derives from object names, and the
//     selectors built from it (hash.go);
//   - the controller's label-domain configuration (labeldomains.go).
//
// Subpackages: bundles holds each release's assets, upstream's own files
// rendered from the release's module (for tests and the demo only: the
// provider binary must not import it), and releases the facts about each
// release the tests and the controller installer rely on, and router the
// sandbox router's deploy manifests of each release that has one (upstream's
// files, byte for byte; small, and embedded in the provider for
// agentsandbox_sandbox_router).
package sandboxapi
