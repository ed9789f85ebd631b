package sandboxsim

// Per-release behaviour of the pure status logic; no cluster needed.

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

func TestSetClaimStatusObservedGenerationPerRelease(t *testing.T) {
	sb := &agentsv1beta1.Sandbox{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Generation: 1},
		Status: agentsv1beta1.SandboxStatus{Conditions: []metav1.Condition{{
			Type: agentsv1beta1.ConditionReady.String(), Status: metav1.ConditionTrue, Reason: "DependenciesReady", ObservedGeneration: 1,
		}}},
	}
	for _, tc := range []struct {
		profile releases.Profile
		want    int64
	}{
		{releases.V050, 1}, {releases.V053, 1}, {releases.V056, 1}, // the sandbox's generation, copied
		{releases.V10, 3}, // the claim's (upstream main 365a29c8)
	} {
		claim := &extv1beta1.SandboxClaim{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
		setClaimStatus(claim, sb, nil, false, tc.profile)
		c := meta.FindStatusCondition(claim.Status.Conditions, extv1beta1.ClaimConditionReady)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != tc.want {
			t.Errorf("%s: Ready condition %+v, want True with observedGeneration %d", tc.profile.Name, c, tc.want)
		}
	}
	// Conditions the claim controller makes itself carry the claim's
	// generation in every release.
	for _, p := range releases.All() {
		claim := &extv1beta1.SandboxClaim{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
		setClaimStatus(claim, nil, errors.Join(errTemplateNotFound), false, p)
		c := meta.FindStatusCondition(claim.Status.Conditions, extv1beta1.ClaimConditionReady)
		if c == nil || c.Reason != extv1beta1.ReasonTemplateNotFound || c.ObservedGeneration != 3 {
			t.Errorf("%s: TemplateNotFound condition %+v, want observedGeneration 3", p.Name, c)
		}
	}
}

func TestMissingDependencyRequeuePerRelease(t *testing.T) {
	for _, p := range releases.All() {
		got := (&claimReconciler{profile: p}).missingDependencyRequeue()
		want := "1m0s"
		if p.ClaimWatchesTemplates {
			want = "30s"
		}
		if got.String() != want {
			t.Errorf("%s: requeue after %s, want %s", p.Name, got, want)
		}
	}
}
