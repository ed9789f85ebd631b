package networkpolicy_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccNetworkPolicy_importBlockOfAnotherObject: an import block whose
// ID names a live policy other than the one configured used to plan
// "import, then replace", and the apply deleted the imported policy (issue
// 13). The plan now fails naming both, and the live policy is untouched;
// an import block of a missing object says it is not found. Run through
// the terraform CLI, so the import's read and the plan are Terraform's own.
func TestAccNetworkPolicy_importBlockOfAnotherObject(t *testing.T) {
	ns := acctest.Namespace(t)
	live, other := acctest.RandomName("live"), acctest.RandomName("other")
	existing := fmt.Sprintf(`
resource "agentsandbox_network_policy" "live" {
  name      = %[1]q
  namespace = %[2]q
  template  = "python"
}
`, live, ns)
	importing := func(id string) string {
		return acctest.Config(existing + fmt.Sprintf(`
import {
  to = agentsandbox_network_policy.test
  id = %[1]q
}

resource "agentsandbox_network_policy" "test" {
  name      = %[2]q
  namespace = %[3]q
  template  = "python"
}
`, id, other, ns))
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: acctest.Config(existing)},
		resource.TestStep{
			Config: importing(ns + "/" + live), PlanOnly: true,
			ExpectError: regexp.MustCompile(`(?s)Import ID names another object.*` + regexp.QuoteMeta(ns+"/"+live) + `.*deleting`),
		},
		resource.TestStep{
			Config: importing(ns + "/no-such-policy"), PlanOnly: true,
			ExpectError: regexp.MustCompile(`NetworkPolicy ` + regexp.QuoteMeta(ns) + `/no-such-policy not found`),
		},
		// The live policy is still there and unchanged.
		resource.TestStep{Config: acctest.Config(existing), ConfigPlanChecks: acctest.EmptyPlanAfterApply},
	))
}
