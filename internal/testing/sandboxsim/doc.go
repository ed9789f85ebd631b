// Package sandboxsim is a test-only stand-in for the kubernetes-sigs/agent-sandbox
// controller. It is NOT the upstream controller and must never be presented as one.
//
// The real controller ships as a container image that cannot be pulled on the
// machines where this provider's tests run, yet the provider waits on status the
// controller writes (Sandbox Ready, warm pool readyReplicas, claim adoption). This
// package re-implements the reconcile behaviour that upstream documents for
// v0.5.x/v1.0.x on top of controller-runtime, against the project's own API types
// in internal/sandboxapi, so those waits and status reads can be exercised against
// a real API server (internal/devenv/localcluster, where kwok makes pods Running/Ready):
//
//   - Sandbox: one Pod from spec.podTemplate, PVCs from volumeClaimTemplates, an
//     optional headless Service, status (Ready/Suspended/PodScheduled/Finished
//     conditions, podIPs, nodeName, selector, service, serviceFQDN), suspend and
//     resume, and shutdownTime expiry with the Retain and Delete policies.
//   - SandboxTemplate: the managed NetworkPolicy "<template>-network-policy"
//     (upstream's secure default, or spec.networkPolicy), removed when Unmanaged.
//   - SandboxWarmPool: keeps spec.replicas pre-created Sandboxes, reports
//     replicas/readyReplicas/selector/observedGeneration, honours the Recreate and
//     OnReplenish update strategies and replenishes after adoption.
//   - SandboxClaim: adopts a ready warm Sandbox or cold-starts one from the
//     template, mirrors its readiness, and applies the claim lifecycle.
//
// Every object it creates carries the label LabelManagedBy=ManagedByValue so a
// reader of a test cluster can tell it apart from the real controller's work, and
// its log lines are named "sandboxsim". Behaviour that upstream has but tests do
// not need (metrics, tracing, events, write-behind batching, the in-memory warm
// queue, legacy label migrations) is left out on purpose; see the deviations
// listed on Run.
//
// The entry point is Run, which blocks until its context is cancelled. Leader
// election (on by default, Lease "agentsandbox-sandboxsim" in kube-system) makes
// several instances against one cluster safe: exactly one reconciles.
package sandboxsim
