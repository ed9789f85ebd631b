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
// (a namespace, a CRD) but which holds a kind the cluster does not serve and
// a ConfigMap the API server rejects (a number where data wants a string)
// is refused before the first write: zero write requests (dry runs are not
// writes), nothing left in the cluster, and the error names each document,
// what the server said, and that nothing was written. The server's
// rejection is reported as such, not as a control-plane failure.
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
			ExpectError: regexp.MustCompile(strings.ReplaceAll(`(?s)2 problem\(s\) found before anything was written`+
				`.*(`+unserved+`.*`+rejected+`|`+rejected+`.*`+unserved+`)`+
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
