package networkpolicy_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccNetworkPolicy_conflicts: a field another tool owns through a
// server-side apply of its own is a conflict: the apply fails naming the
// field and the field manager and writes nothing; force_conflicts = true
// takes the field over. A value changed by an ordinary write (as kubectl
// edit or patch does) is drift, set back without force_conflicts.
func TestAccNetworkPolicy_conflicts(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("conflict")
	ref := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}
	config := func(extra string) string {
		return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name         = %[1]q
  namespace    = %[2]q
  labels       = { team = "a" }
  pod_selector = { match_labels = { app = "agent" } }
%[3]s
}
`, name, ns, extra))
	}
	// Another tool applies the label with server-side apply, taking it.
	otherApplies := func() {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("networking.k8s.io/v1")
		u.SetKind("NetworkPolicy")
		u.SetName(name)
		u.SetNamespace(ns)
		u.SetLabels(map[string]string{"team": "b"})
		if _, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Apply(t.Context(), name, u,
			metav1.ApplyOptions{FieldManager: "team-b-gitops", Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	label := func(want string) func(*unstructured.Unstructured) error {
		return acctest.Field(want, "metadata", "labels", "team")
	}
	conflict := regexp.MustCompile(`(?s)` + strings.Join([]string{
		`NetworkPolicy\s+"` + regexp.QuoteMeta(ns+"/"+name) + `":\s+field\s+owned\s+by\s+another\s+field\s+manager`,
		`\.metadata\.labels\.team\s+is\s+owned\s+by\s+field\s+manager\s+"team-b-gitops"\s+\(server-side\s+apply\)`,
		`Nothing\s+was\s+written`,
		`force_conflicts\s+=\s+true`,
	}, ".*"))

	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           config(""),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			PreConfig:   otherApplies,
			Config:      config(""),
			ExpectError: conflict,
		},
		resource.TestStep{
			// The refused apply wrote nothing; opting in takes the field.
			PreConfig: func() {
				if err := label("b")(acctest.Get(t, ref)); err != nil {
					t.Fatalf("the refused apply changed the object: %v", err)
				}
			},
			Config:           config("  force_conflicts = true"),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.ExpectObject(address, gvr, label("a"), acctest.OwnedBy(kube.DefaultFieldManager, ".metadata.labels.team")),
			},
		},
		resource.TestStep{
			// An ordinary write is drift: set back without the opt-in.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"metadata":{"labels":{"team":"c"}}}`)
			},
			Config:            config(""),
			ConfigPlanChecks:  fam.DriftRepaired("team:c"),
			ConfigStateChecks: []statecheck.StateCheck{acctest.ExpectObject(address, gvr, label("a"))},
		},
	))
}
