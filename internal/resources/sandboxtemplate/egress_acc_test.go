package sandboxtemplate_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccSandboxTemplate_egressToSelectors: a template's network_policy
// may allow egress to pods chosen by label (here an in-cluster egress proxy
// in another namespace) as well as to IP ranges. The rules are written into
// spec.networkPolicy as rendered, the controller's managed NetworkPolicy
// carries the selector peer, and the next plan is empty; import reads the
// entry back.
func TestAccSandboxTemplate_egressToSelectors(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("tmpl")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    containers = [{
      name      = "python-runtime"
      image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      resources = { limits = { cpu = "1", memory = "1Gi" } }
    }]
  }
  network_policy = {
    allow_dns = true
    allow_egress = [{
      namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "egress" } }
      pod_selector       = { match_labels = { app = "squid" } }
      ports              = [{ port = "3128" }]
    }]
  }
}
`, name, ns))
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           cfg,
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy_rendered"),
					knownvalue.StringRegexp(regexp.MustCompile(`(?s)"port":\s*3128,.*"app":\s*"squid"`))),
				acctest.ExpectObject(address, gvr, acctest.Mentions("app:squid", "spec", "networkPolicy", "egress")),
			},
			Check: managedPolicy(t, ns, name, func(np *unstructured.Unstructured) error {
				eg, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
				for _, r := range eg {
					if s := fmt.Sprint(r); strings.Contains(s, "app:squid") && strings.Contains(s, "kubernetes.io/metadata.name:egress") &&
						!strings.Contains(s, "ipBlock") {
						return nil
					}
				}
				return fmt.Errorf("managed policy egress = %v, want a rule to pods app=squid in namespace egress", eg)
			}),
		},
		resource.TestStep{
			Config:                  cfg,
			ResourceName:            address,
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"network_policy_management"},
		},
	))
}
