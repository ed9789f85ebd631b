// Package releases lists the upstream agent-sandbox releases the test world
// runs (each with upstream's own controller, built from the Go module proxy
// by internal/devenv/realcontroller, and its own CRDs from package bundles)
// and what the tests must expect of each where releases differ.
//
// A Profile is one real release: nothing here stands in for a release, and
// every fact is read in upstream's source at that tag (the module
// sigs.k8s.io/agent-sandbox in the module cache), cited path:line next to it.
// The facts that are visible in a release's CRDs are also checked against
// its bundle by releases_test.go.
package releases

import (
	"fmt"
	"strings"
)

// Profile is one upstream release and the facts of it the tests depend on.
type Profile struct {
	// Name is the release tag ("v1.0.3").
	Name string

	// ServesV1alpha1 is the v0.5.x shape: every CRD serves v1beta1 (stored)
	// and the deprecated v1alpha1, converted by the controller's webhook
	// (k8s/crds/*.yaml at v0.5.0..v0.5.6: `conversion.strategy: Webhook`).
	ServesV1alpha1 bool
	// SandboxVCTImmutableRule is the CEL rule "volumeClaimTemplates is
	// immutable" on Sandbox.spec (api/v1beta1/sandbox_types.go:192 at v0.5.3;
	// absent at v0.5.0..v0.5.2).
	SandboxVCTImmutableRule bool
	// WarmPoolObservedGeneration is SandboxWarmPool.status.observedGeneration,
	// in the schema and written by the controller from v0.5.6
	// (extensions/api/v1beta1/sandboxwarmpool_types.go:113 at v0.5.6; the
	// status at v0.5.5 has only replicas, readyReplicas and selector).
	WarmPoolObservedGeneration bool
	// ClaimReadyForwardsSandboxCondition: the claim's Ready condition is the
	// sandbox's Ready condition copied unchanged, so its observedGeneration is
	// the sandbox's generation, not the claim's
	// (extensions/controllers/sandboxclaim_controller.go:582 at v0.5.0, :629 at
	// v0.5.3, :759 at v0.5.5, :824 at v0.5.6; v1.0.x sets the claim's
	// generation: :826 at v1.0.1, :824 at v1.0.3).
	ClaimReadyForwardsSandboxCondition bool
	// AdoptionUpdateWritesEmptyPodMetadata: at adoption the claim controller
	// records the sandbox's name with a full Update of the typed claim, whose
	// AdditionalPodMetadata is a struct tagged omitempty, so the claim gains
	// `additionalPodMetadata: {}` (sandboxclaim_controller.go:793 at v0.5.0,
	// :1142 at v0.5.6, :1139 at v1.0.3; sandboxclaim_types.go:122 at v0.5.6,
	// :125 at v1.0.3).
	AdoptionUpdateWritesEmptyPodMetadata bool
	// KubernetesAPI is the k8s.io/api version of the release's go.mod, whose
	// PodSpec the Sandbox and SandboxTemplate CRDs serve under
	// spec.podTemplate.spec; a field of a newer PodSpec is not in their schema.
	KubernetesAPI string
	// ClaimWatchesTemplates: a claim waiting on TemplateNotFound is
	// reconciled as soon as the template is created
	// (sandboxclaim_controller.go:2471-2475 at v1.0.1, :2469-2473 at
	// v1.0.3). Without it the claim is requeued after one minute (:394 at
	// v0.5.6; v0.5.0 and v0.5.2 may wake earlier through the warm pool's
	// status, whose watch has no generation predicate there).
	ClaimWatchesTemplates bool
	// SandboxPodNameAnnotation: the sandbox controller writes the pod's name
	// into the Sandbox's annotation agents.x-k8s.io/pod-name
	// (controllers/sandbox_controller.go:746 at v0.5.0, :1293 at v0.5.6);
	// v1.0.x only reads and clears it (:1153-1158 at v1.0.1, :1163-1168 at
	// v1.0.3; deprecated at api/v1beta1/sandbox_types.go:126).
	SandboxPodNameAnnotation bool
	// ClaimServiceFQDN: the claim controller mirrors the sandbox's service
	// FQDN into SandboxClaim.status.sandbox.serviceFQDN (v1.0.1:
	// extensions/api/v1beta1/sandboxclaim_types.go).
	ClaimServiceFQDN bool
}

// The releases, oldest first. Only releases the Go module proxy serves are
// here (v0.5.1, v1.0.0 and v1.0.2 are not listed; v0.5.4 is listed, but its
// zip is refused: "403 Forbidden, This module version is not available").
var (
	V050 = Profile{
		Name: "v0.5.0", ServesV1alpha1: true, KubernetesAPI: "v0.35.4", // go.mod:19
		ClaimReadyForwardsSandboxCondition: true, AdoptionUpdateWritesEmptyPodMetadata: true, SandboxPodNameAnnotation: true,
	}
	V052 = Profile{
		Name: "v0.5.2", ServesV1alpha1: true, KubernetesAPI: "v0.36.2", // go.mod:29
		ClaimReadyForwardsSandboxCondition: true, AdoptionUpdateWritesEmptyPodMetadata: true, SandboxPodNameAnnotation: true,
	}
	V053 = Profile{
		Name: "v0.5.3", ServesV1alpha1: true, KubernetesAPI: "v0.36.2", // go.mod:29
		SandboxVCTImmutableRule:            true,
		ClaimReadyForwardsSandboxCondition: true, AdoptionUpdateWritesEmptyPodMetadata: true, SandboxPodNameAnnotation: true,
	}
	V055 = Profile{
		Name: "v0.5.5", ServesV1alpha1: true, KubernetesAPI: "v0.36.3", // go.mod:30
		SandboxVCTImmutableRule:            true,
		ClaimReadyForwardsSandboxCondition: true, AdoptionUpdateWritesEmptyPodMetadata: true, SandboxPodNameAnnotation: true,
	}
	V056 = Profile{
		Name: "v0.5.6", ServesV1alpha1: true, KubernetesAPI: "v0.36.3", // go.mod:30
		SandboxVCTImmutableRule: true, WarmPoolObservedGeneration: true,
		ClaimReadyForwardsSandboxCondition: true, AdoptionUpdateWritesEmptyPodMetadata: true, SandboxPodNameAnnotation: true,
	}
	V101 = Profile{
		Name: "v1.0.1", KubernetesAPI: "v0.36.4",
		SandboxVCTImmutableRule: true, WarmPoolObservedGeneration: true,
		AdoptionUpdateWritesEmptyPodMetadata: true, ClaimWatchesTemplates: true, ClaimServiceFQDN: true,
	}
	V103 = Profile{
		Name: "v1.0.3", KubernetesAPI: "v0.37.0", // go.mod
		SandboxVCTImmutableRule: true, WarmPoolObservedGeneration: true,
		AdoptionUpdateWritesEmptyPodMetadata: true, ClaimWatchesTemplates: true, ClaimServiceFQDN: true,
	}
)

// Default is the release of the default suite (`make test`): the newest.
var Default = V103

// All returns every release, oldest first.
func All() []Profile { return []Profile{V050, V052, V053, V055, V056, V101, V103} }

// Lookup returns the release named name; "" selects Default.
func Lookup(name string) (Profile, error) {
	if name == "" {
		return Default, nil
	}
	names := make([]string, 0, len(All()))
	for _, p := range All() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("agent-sandbox %s is not a release the test world can run: it runs %s "+
		"(the releases the Go module proxy serves)", name, strings.Join(names, ", "))
}

// String is the release's name.
func (p Profile) String() string { return p.Name }
