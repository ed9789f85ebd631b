package isolationreport_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// sandboxdConfig: two sandboxd sandboxes (upstream's image, whose
// entrypoint is the daemon), each with a policy written with the
// provider: "guarded" admits only the router (the policy's default
// ingress), "open" also every pod of its namespace.
func sandboxdConfig(ns string) string {
	sandbox := func(name, ingress string) string {
		return fmt.Sprintf(`
resource "agentsandbox_sandbox" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    labels = { sandboxd = %[1]q }
    containers = [{
      name      = "sandboxd"
      image     = "us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main"
      ports     = [{ container_port = 8080 }, { container_port = 9090 }]
      resources = { limits = { cpu = "500m", memory = "512Mi" } }
    }]
  }
}

resource "agentsandbox_network_policy" %[1]q {
  name         = %[1]q
  namespace    = %[2]q
  pod_selector = { match_labels = { sandboxd = %[1]q } }%[3]s
}
`, name, ns, ingress)
	}
	return acctest.ConfigCompose(acctest.ProviderConfig(),
		sandbox("guarded", ""),
		sandbox("open", `
  ingress = [
    { pod_selector = { match_labels = { app = "sandbox-router" } }, namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "agent-sandbox-system" } }, ports = [{ port = "8080" }] },
    { pod_selector = {} },
  ]`), fmt.Sprintf(`
data "agentsandbox_isolation_report" "all" {
  namespace  = %q
  depends_on = [agentsandbox_sandbox.guarded, agentsandbox_sandbox.open, agentsandbox_network_policy.guarded, agentsandbox_network_policy.open]
}
`, ns))
}

// TestAccIsolationReport_sandboxd: on the local cluster, a sandboxd
// container is reported with its ports and no authentication; the one
// only the router reaches is clean of the sandboxd violation, the one its
// namespace reaches has it, on the policy.
func TestAccIsolationReport_sandboxd(t *testing.T) {
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	const title = "sandboxd reachable beyond the router @ network_policy"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: sandboxdConfig(ns),
			Check: func(s *terraform.State) error {
				rep, _, err := readReport(s)
				if err != nil {
					return err
				}
				for name, want := range map[string]struct {
					violation bool
					sameNS    string
				}{"guarded": {false, "denied"}, "open": {true, "allowed"}} {
					r := rep[name]
					if r == nil {
						return fmt.Errorf("no sandbox %s in the report", name)
					}
					a := r.attrs
					if a["sandboxd.#"] != "1" || a["sandboxd.0.container"] != "sandboxd" || a["sandboxd.0.rest_port"] != "8080" ||
						a["sandboxd.0.grpc_port"] != "9090" || a["sandboxd.0.listen_host"] != "0.0.0.0" || a["sandboxd.0.authentication"] != "none" {
						return fmt.Errorf("%s: sandboxd = %v", name, sandboxdAttrs(a))
					}
					for _, api := range []string{"rest", "grpc"} {
						if v := a["sandboxd.0.reachable_from."+api+"_from_same_namespace.verdict"]; v != want.sameNS {
							return fmt.Errorf("%s: %s_from_same_namespace %s, want %s (%v)", name, api, v, want.sameNS, sandboxdAttrs(a))
						}
						if v := a["sandboxd.0.reachable_from."+api+"_from_other_namespaces.verdict"]; v != "denied" {
							return fmt.Errorf("%s: %s_from_other_namespaces %s, want denied", name, api, v)
						}
					}
					if got := a["sandboxd.0.reachable_beyond_router"] == "true"; got != want.violation {
						return fmt.Errorf("%s: reachable_beyond_router %v", name, got)
					}
					has := expectViolations(r, title) == nil
					if has != want.violation {
						return fmt.Errorf("%s: violation %q present %v, want %v: %q", name, title, has, want.violation, r.violations)
					}
				}
				return nil
			},
		}},
	})
}

func sandboxdAttrs(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if strings.HasPrefix(k, "sandboxd.") && !strings.Contains(k, ".reason") && !strings.Contains(k, ".address") {
			out[k] = v
		}
	}
	return out
}
