package networkpolicy_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccNetworkPolicyDataSource_basic reads two policies: one this
// provider wrote, and the one the controller (here the test stand-in, which
// implements upstream's managed default) keeps for a Managed template. The
// resource, configured as upstream's default, renders exactly the
// controller's policy: allow_internet is upstream's egress, byte for byte.
func TestAccNetworkPolicyDataSource_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "managed", templateSpec("Managed"))
	managed := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: "managed-network-policy"}
	acctest.WaitFor(t, acctest.GoneTimeout, "the controller's policy "+managed.String(), func(ctx context.Context) (bool, string, error) {
		_, err := acctest.GetObject(ctx, managed)
		if apierrors.IsNotFound(err) {
			return false, "not created yet", nil
		}
		return err == nil, "", err
	})
	name := acctest.RandomName("upstream-default")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name           = %[1]q
  namespace      = %[2]q
  template       = "managed"
  allow_internet = true
  labels         = { team = "a" }
  # upstream's router rule has no port restriction
  ingress = [{
    namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "agent-sandbox-system" } }
    pod_selector       = { match_labels = { app = "sandbox-router" } }
  }]
}

data "agentsandbox_network_policy" "ours" {
  name      = agentsandbox_network_policy.test.name
  namespace = %[2]q
}

data "agentsandbox_network_policy" "controllers" {
  name      = "managed-network-policy"
  namespace = %[2]q
}
`, name, ns))
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs(address, tfjsonpath.New("rendered"), "data.agentsandbox_network_policy.ours", tfjsonpath.New("rendered"), compare.ValuesSame()),
				statecheck.CompareValuePairs(address, tfjsonpath.New("rendered"), "data.agentsandbox_network_policy.controllers", tfjsonpath.New("rendered"), compare.ValuesSame()),
				statecheck.ExpectKnownValue("data.agentsandbox_network_policy.ours", tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
				statecheck.ExpectKnownValue("data.agentsandbox_network_policy.ours", tfjsonpath.New("labels"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("a")})),
			},
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config: acctest.Config(fmt.Sprintf(`
data "agentsandbox_network_policy" "missing" {
  name      = "no-such-policy"
  namespace = %q
}
`, ns)),
			ExpectError: regexp.MustCompile(`NetworkPolicy "` + ns + `/no-such-policy" not found`),
		},
	))
}
