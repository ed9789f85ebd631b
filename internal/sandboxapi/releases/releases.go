// Package releases describes the upstream agent-sandbox releases the project
// supports as profiles: what each release's CRDs serve and how its controller
// behaves where the provider can tell the difference. The test world selects
// a profile (package testenv installs its CRDs, package sandboxsim behaves as
// its controller does), so the suite runs against each release's shape.
//
// Every fact here was read in upstream's source at the tag named next to it
// (kubernetes-sigs/agent-sandbox); the v1.0 profile is the exception: its
// source is not available to the project, so it follows the public
// description of v1.0 (v1beta1 only, no conversion webhook) and the fixes
// made on upstream's main branch after v0.5.6, and says so.
package releases

import (
	"fmt"
	"sort"
	"strings"
)

// Profile is one release line: releases whose CRDs and controller behave
// alike for everything the provider reads or writes.
type Profile struct {
	// Name is the profile's identifier, the first release it covers ("v0.5.0").
	Name string
	// Covers lists the releases the profile stands for, for docs and logs.
	Covers string
	// VerifiedFromSource says the profile's facts were read in upstream's
	// source at those tags (false: from public descriptions only).
	VerifiedFromSource bool

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
	// v0.5.3, :759 at v0.5.5, :824 at v0.5.6; upstream main fixed it after
	// v0.5.6 in 365a29c8 "use claim generation for Ready condition").
	ClaimReadyForwardsSandboxCondition bool
	// AdoptionUpdateWritesEmptyPodMetadata: at adoption the claim controller
	// records the sandbox's name with a full Update of the typed claim, whose
	// AdditionalPodMetadata is a struct tagged omitempty, so the claim gains
	// `additionalPodMetadata: {}` (sandboxclaim_controller.go:793 at v0.5.0,
	// :1142 at v0.5.6; sandboxclaim_types.go:122 at v0.5.6).
	AdoptionUpdateWritesEmptyPodMetadata bool
	// KubernetesAPI is the k8s.io/api version the release's CRDs were
	// generated from (go.mod at the tag), whose PodSpec is the one the
	// Sandbox and SandboxTemplate CRDs serve under spec.podTemplate.spec;
	// a field of a newer PodSpec is not in their schema. "" means the
	// project's own (the v1.0 profile, whose source is not available).
	KubernetesAPI string
	// ClaimWatchesTemplates: a claim waiting on TemplateNotFound is
	// reconciled as soon as the template appears. Without it (every v0.5.x)
	// the claim is requeued after one minute
	// (sandboxclaim_controller.go:385-401 at v0.5.6; the template watch came
	// after v0.5.6, upstream main b7631f00).
	ClaimWatchesTemplates bool
}

// The profiles, oldest first.
var (
	// V050 covers v0.5.0 to v0.5.2.
	V050 = Profile{
		Name: "v0.5.0", Covers: "v0.5.0, v0.5.1, v0.5.2", VerifiedFromSource: true,
		ServesV1alpha1: true,
		// go.mod:19 at v0.5.0; v0.5.1 and v0.5.2 moved to v0.36.2
		// (go.mod:28/29), whose PodSpec adds schedulingGroup: the profile
		// serves v0.5.0's, the strictest of the three for anything the
		// provider writes. (v0.35's alpha workloadRef, which 1.36 dropped,
		// is missing too: profiles are cut down from the project's newer
		// schema, see prunePodSpec.)
		KubernetesAPI:                        "v0.35.4",
		ClaimReadyForwardsSandboxCondition:   true,
		AdoptionUpdateWritesEmptyPodMetadata: true,
	}
	// V053 covers v0.5.3 to v0.5.5.
	V053 = Profile{
		Name: "v0.5.3", Covers: "v0.5.3, v0.5.4, v0.5.5", VerifiedFromSource: true,
		ServesV1alpha1: true,
		// go.mod:29 at v0.5.3 and v0.5.4 (v0.36.2), go.mod:30 at v0.5.5
		// (v0.36.3): the same API.
		KubernetesAPI:                        "v0.36.3",
		SandboxVCTImmutableRule:              true,
		ClaimReadyForwardsSandboxCondition:   true,
		AdoptionUpdateWritesEmptyPodMetadata: true,
	}
	// V056 is v0.5.6, the newest release whose source the project can read,
	// and the default profile of the suite.
	V056 = Profile{
		Name: "v0.5.6", Covers: "v0.5.6", VerifiedFromSource: true,
		ServesV1alpha1:                       true,
		KubernetesAPI:                        "v0.36.3", // go.mod:30 at v0.5.6
		SandboxVCTImmutableRule:              true,
		WarmPoolObservedGeneration:           true,
		ClaimReadyForwardsSandboxCondition:   true,
		AdoptionUpdateWritesEmptyPodMetadata: true,
	}
	// V10 is the v1.0 shape as publicly described (v1beta1 only, no
	// webhook), with upstream main's post-v0.5.6 fixes. Not verified against
	// v1.0's source, which is not available here.
	V10 = Profile{
		Name: "v1.0", Covers: "v1.0.x (as described publicly; source not available)",
		SandboxVCTImmutableRule:              true,
		WarmPoolObservedGeneration:           true,
		AdoptionUpdateWritesEmptyPodMetadata: true,
		ClaimWatchesTemplates:                true,
	}
)

// Default is the profile of the default suite.
var Default = V056

// All returns every profile, oldest first.
func All() []Profile { return []Profile{V050, V053, V056, V10} }

// Lookup returns the profile named name. Any release a profile covers is
// accepted too ("v0.5.4" selects V053); "" selects Default.
func Lookup(name string) (Profile, error) {
	if name == "" {
		return Default, nil
	}
	for _, p := range All() {
		if p.Name == name {
			return p, nil
		}
		for _, c := range strings.Split(p.Covers, ", ") {
			if c == name {
				return p, nil
			}
		}
	}
	names := make([]string, 0, 4)
	for _, p := range All() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return Profile{}, fmt.Errorf("unknown agent-sandbox release profile %q: known profiles are %s (or any release they cover)",
		name, strings.Join(names, ", "))
}

// String is the profile's name and what it covers.
func (p Profile) String() string { return fmt.Sprintf("%s (%s)", p.Name, p.Covers) }
