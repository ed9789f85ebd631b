package networkpolicy_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccNetworkPolicy_twoResourcesOneObject is the race the issue reported:
// two resources naming the same policy, created in parallel by one apply.
// Creation is atomic, so exactly one of them creates the object and the
// other fails naming it, saying another resource manages it and not to
// import it; the policy is never owned twice (no perpetual flip-flop). Run several times, since the race
// was lost only in most runs.
func TestAccNetworkPolicy_twoResourcesOneObject(t *testing.T) {
	ns := acctest.Namespace(t)
	for round := range 3 {
		name := acctest.RandomName(fmt.Sprintf("twice%d", round))
		resource.Test(t, fam.Case(t, resource.TestStep{
			Config: acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "first" {
  name         = %[1]q
  namespace    = %[2]q
  pod_selector = { match_labels = { "tier" = "first" } }
}

resource "agentsandbox_network_policy" "second" {
  name         = %[1]q
  namespace    = %[2]q
  pod_selector = { match_labels = { "tier" = "second" } }
}
`, name, ns)),
			// The winner is the other resource of this configuration: the
			// loser is told so, and how to find it, never to import the
			// object (which would make both resources own it and flip it
			// between their settings on every apply: issue 37).
			ExpectError: regexp.MustCompile(`(?s)NetworkPolicy "` + regexp.QuoteMeta(ns+"/"+name) + `" already exists: two\s+resources of this configuration declare it.*must\s+not\s+be\s+imported`),
		}, resource.TestStep{
			// Exactly one resource is in the state, and the object is
			// the one it created.
			RefreshState: true,
			// The losing resource is still to be created.
			ExpectNonEmptyPlan: true,
			Check: func(s *terraform.State) error {
				var owners []string
				for _, r := range []string{"first", "second"} {
					if _, ok := s.RootModule().Resources["agentsandbox_network_policy."+r]; ok {
						owners = append(owners, r)
					}
				}
				if len(owners) != 1 {
					return fmt.Errorf("resources in the state: %v; want exactly one owner of %s/%s", owners, ns, name)
				}
				obj, err := acctest.GetObject(context.Background(), acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name})
				if err != nil {
					return err
				}
				tier, _, _ := unstructured.NestedString(obj.Object, "spec", "podSelector", "matchLabels", "tier")
				if tier != owners[0] {
					return fmt.Errorf("the live policy selects tier %q but its owner in the state is %q", tier, owners[0])
				}
				return nil
			},
		}))
	}
}
