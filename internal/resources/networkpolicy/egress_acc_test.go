package networkpolicy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

func egressSelectorsConfig(ns, name, egress string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name      = %[1]q
  namespace = %[2]q
  template  = "python"
  allow_egress = [%[3]s]
}
`, name, ns, egress))
}

// TestAccNetworkPolicy_egressToSelectors: allow_egress may name pods and
// namespaces instead of an IP range (a NetworkPolicyPeer with selectors,
// and no metadata carve-out, which applies to IP ranges); it is written as
// rendered, re-plans empty, imports back to the same entries, and changes
// in place between a range and selectors.
func TestAccNetworkPolicy_egressToSelectors(t *testing.T) {
	ns := acctest.Namespace(t)
	// Import maps the policy's pod selector back to the template by name.
	acctest.CreateTemplate(t, ns, "python", templateSpec("Unmanaged"))
	name := acctest.RandomName("isolate")
	proxy := `{
    pod_selector = { match_labels = { app = "egress-proxy" } }
    ports        = [{ port = "3128" }]
  }, {
    namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "models" } }
    pod_selector       = { match_expressions = [{ key = "tier", operator = "In", values = ["inference"] }] }
  }`
	egressPeers := func(want ...string) func(*unstructured.Unstructured) error {
		return func(u *unstructured.Unstructured) error {
			eg, _, _ := unstructured.NestedSlice(u.Object, "spec", "egress")
			if len(eg) != len(want) {
				return fmt.Errorf("egress = %v, want %d rules", eg, len(want))
			}
			for i, w := range want {
				if got := fmt.Sprint(eg[i]); !strings.Contains(got, w) {
					return fmt.Errorf("egress[%d] = %s, want it to contain %s", i, got, w)
				}
			}
			return nil
		}
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           egressSelectorsConfig(ns, name, proxy),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				expectWrittenEqualsRendered(address),
				acctest.ExpectObject(address, gvr, egressPeers("podSelector:map[matchLabels:map[app:egress-proxy]]", "kubernetes.io/metadata.name:models")),
			},
		},
		resource.TestStep{
			Config:            egressSelectorsConfig(ns, name, proxy),
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true,
		},
		resource.TestStep{
			Config:           egressSelectorsConfig(ns, name, `{ cidr = "10.20.0.0/16" }`),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				expectWrittenEqualsRendered(address),
				acctest.ExpectObject(address, gvr, egressPeers("10.20.0.0/16")),
			},
		},
	))
}
