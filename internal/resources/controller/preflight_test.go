package controller_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccController_neverHalfApplies: a manifest whose first stage is fine
// (a namespace, a CRD) but which holds a kind the cluster does not serve, a
// ConfigMap the API server rejects (a number where data wants a string) and
// another such ConfigMap in the namespace the manifest creates (which
// cannot be dry-run before that namespace exists: it is checked against
// the schema the cluster publishes, issue 37) is refused before the first
// write: zero write requests (dry runs are not writes), nothing left in the
// cluster, and the error names each document, what the server said, and
// that nothing was written. The server's rejection is reported as such,
// not as a control-plane failure.
func TestAccController_neverHalfApplies(t *testing.T) {
	ns := acctest.RandomName("ctrl-pre")
	group := acctest.RandomName("g") + ".acctest.agentsandbox.dev"
	manifest := testManifest(ns, group) + fmt.Sprintf(`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: %[1]s
data:
  replicas: 3
---
apiVersion: nothing.acctest.agentsandbox.dev/v1
kind: Gadget
metadata:
  name: unserved
  namespace: %[1]s
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: kube-system
data:
  count: 1
`, ns)
	const (
		schema   = `document 5 .*ConfigMap "[^"]+/settings" does not fit the schema the cluster publishes for /v1, Kind=ConfigMap.*\.data\.replicas: expected string`
		unserved = `document 6 .*does not serve nothing\.acctest\.agentsandbox\.dev/v1 Gadget`
		rejected = `document 7 .*rejected ConfigMap "kube-system/elsewhere" in a server-side dry run.*\.data\.count: expected string`
	)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: kube.ResetRequestCounts,
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version  = "v0.0.1"
  manifest = %s
}`, acctest.HCLString(manifest))),
			// Terraform wraps long lines: any space may be a line break.
			// The problems come in apply order, not document order.
			ExpectError: regexp.MustCompile(strings.ReplaceAll(`(?s)3 problem\(s\) found before anything was written`+
				`.*(`+schema+`.*`+unserved+`.*`+rejected+`|`+schema+`.*`+rejected+`.*`+unserved+`|`+rejected+`.*`+schema+`.*`+unserved+`)`+
				`.*Nothing was written to the cluster`, " ", `\s+`)),
		}},
		CheckDestroy: func(*terraform.State) error {
			if w := kube.WriteCount(); w != 0 {
				return fmt.Errorf("the refused install sent %d write requests: %v", w, writeRequests())
			}
			return checkGone(acctest.ObjectRef{GVR: namespaceGVR, Name: ns}, acctest.ObjectRef{GVR: crdGVR, Name: "widgets." + group})(nil)
		},
	})
}

// TestAccController_refusedAfterFirstStageLeavesNothing: an object in the
// namespace the manifest creates that fits its kind's schema but that the
// API server refuses (an invalid name, which only the server checks) can be
// dry-run only once the namespace exists. The install writes the first
// stage (the namespace, the CRD), the dry run refuses the object, and what
// the install had created is deleted again: nothing of the refused manifest
// is left (issue 37), and the error says so.
func TestAccController_refusedAfterFirstStageLeavesNothing(t *testing.T) {
	ns := acctest.RandomName("ctrl-rb")
	group := acctest.RandomName("g") + ".acctest.agentsandbox.dev"
	manifest := testManifest(ns, group) + fmt.Sprintf(`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: Not_A_Valid_Name
  namespace: %[1]s
data:
  replicas: "3"
`, ns)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version  = "v0.0.1"
  manifest = %s
}`, acctest.HCLString(manifest))),
			ExpectError: regexp.MustCompile(strings.ReplaceAll(`(?s)found by the server-side dry run.*Not_A_Valid_Name.*`+
				`deleted them again, so nothing of the refused manifest is left`, " ", `\s+`)),
		}, {
			// Right after the refusal, before any destroy: nothing is in
			// the state and the namespace and CRD are gone (or going).
			PreConfig: func() {
				if err := checkGone(acctest.ObjectRef{GVR: namespaceGVR, Name: ns}, acctest.ObjectRef{GVR: crdGVR, Name: "widgets." + group})(nil); err != nil {
					t.Errorf("after the refused install: %v", err)
				}
			},
			RefreshState: true,
			// The configuration still declares the controller, which
			// the state does not hold: the plan creates it.
			ExpectNonEmptyPlan: true,
			Check: func(s *terraform.State) error {
				if r, ok := s.RootModule().Resources["agentsandbox_controller.test"]; ok {
					return fmt.Errorf("the refused install left %s in the state: %v", "agentsandbox_controller.test", r.Primary.Attributes)
				}
				return nil
			},
		}},
		CheckDestroy: checkGone(acctest.ObjectRef{GVR: namespaceGVR, Name: ns}, acctest.ObjectRef{GVR: crdGVR, Name: "widgets." + group}),
	})
}
