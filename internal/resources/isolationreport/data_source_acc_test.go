package isolationreport_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/isolationreport"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), DataSources: []string{"agentsandbox_isolation_report"},
		Sources: []string{"."}, Exempt: map[string]string{
			"Isolation declared, not verified": "TestAccIsolationReport_declaredRuntimeClass: a warning of the read on a cluster, " +
				"not a refusal (a declared RuntimeClass is valid input); that test reads through it and checks it at its attribute",
		}}.Check)
}

const dsAddress = "data.agentsandbox_isolation_report.all"

// postureConfig is the cluster under report, written with the provider
// itself: a hardened template and its pool of two, a template loosened in
// each way the hardening warns about and its pool (but procMount Unmasked,
// which the API server accepts only with hostUsers = false, and so not with
// the host namespaces of that template: the sandbox "unmasked" has it),
// the quickstart's isolation policy for every execution sandbox, and three
// sandboxes: one that no policy selects, one selected by the policies the
// test writes out of band with a wide egress range (wideLabel), and one
// running as a service account bound to the admin role with its token
// mounted. The report reads it all; withReport adds the data source
// (depends_on: read at apply on the first step, while the objects do not
// exist yet) and outputs.
func postureConfig(ns string, report string) string {
	container := `{
      name      = "agent"
      image     = "registry.example/python-runtime:1"
      ports     = [{ container_port = 8888 }]
      resources = { limits = { cpu = "500m", memory = "256Mi" } }
    }`
	sandbox := func(res, component, extraLabels, extra string) string {
		return fmt.Sprintf(`
resource "agentsandbox_sandbox" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    labels     = { "app.kubernetes.io/component" = %[3]q%[4]s }
    containers = [%[5]s]%[6]s
  }
}
`, res, ns, component, extraLabels, container, extra)
	}
	return acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "hardened" {
  name                      = "hardened"
  namespace                 = %[1]q
  network_policy_management = "Unmanaged"
  pod_template = {
    labels     = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [%[2]s]
  }
}

resource "agentsandbox_warm_pool" "hardened" {
  name      = "hardened"
  namespace = %[1]q
  template  = agentsandbox_sandbox_template.hardened.name
  replicas  = 2
}

resource "agentsandbox_sandbox_template" "loosened" {
  name                      = "loosened"
  namespace                 = %[1]q
  network_policy_management = "Unmanaged"
  pod_template = {
    labels                          = { "app.kubernetes.io/component" = "execution-sandbox" }
    runtime_class_name              = ""
    automount_service_account_token = true
    security_context = {
      run_as_non_root = false
      seccomp_profile = { type = "Unconfined" }
    }
    containers = [{
      name      = "agent"
      image     = "registry.example/python-runtime:1"
      resources = { limits = { cpu = "500m", memory = "256Mi" } }
      security_context = {
        run_as_user                = 0
        privileged                 = true
        allow_privilege_escalation = true
        capabilities               = { add = ["NET_RAW"], drop = [] }
      }
    }]
    pod_spec_overrides = jsonencode({
      hostNetwork     = true
      hostPID         = true
      hostIPC         = true
      volumes         = [{ name = "host", hostPath = { path = "/" } }]
      securityContext = { appArmorProfile = { type = "Unconfined" } }
    })
  }
}

resource "agentsandbox_warm_pool" "loosened" {
  name      = "loosened"
  namespace = %[1]q
  template  = agentsandbox_sandbox_template.loosened.name
  replicas  = 1
}

# The quickstart's isolation: ingress only from the router, no egress.
resource "agentsandbox_network_policy" "isolate" {
  name      = "isolate-execution-sandboxes"
  namespace = %[1]q
  pod_selector = {
    match_labels = { "app.kubernetes.io/component" = "execution-sandbox" }
  }
}
`, ns, container),
		sandbox("exposed", "exposed", "", ""),
		sandbox("wide", "execution-sandbox", `, reach = "wide"`, ""),
		sandbox("linklocal", "execution-sandbox", `, reach = "link-local"`, ""),
		sandbox("powerful", "execution-sandbox", "", `
    service_account_name            = "builder"
    automount_service_account_token = true`),
		sandbox("unmasked", "execution-sandbox", "", `
    pod_spec_overrides = jsonencode({
      hostUsers  = false
      containers = [{ name = "agent", securityContext = { procMount = "Unmasked" } }]
    })`),
		report)
}

func reportBlock(ns string, dependsOn bool, lifecycle string) string {
	deps := ""
	if dependsOn {
		deps = `
  depends_on = [agentsandbox_warm_pool.hardened, agentsandbox_warm_pool.loosened, agentsandbox_network_policy.isolate,
    agentsandbox_sandbox.exposed, agentsandbox_sandbox.wide, agentsandbox_sandbox.linklocal, agentsandbox_sandbox.powerful,
    agentsandbox_sandbox.unmasked]`
	}
	return fmt.Sprintf(`
data "agentsandbox_isolation_report" "all" {
  namespace = %[1]q%[2]s%[3]s
}

output "violations" {
  value = data.agentsandbox_isolation_report.all.summary.violations
}
`, ns, deps, lifecycle)
}

// setUpOutOfBand writes what another team (not this configuration) would:
// policies opening a wide egress range to two sandboxes, and a service
// account bound to the admin role.
func setUpOutOfBand(t *testing.T, ns string) {
	cs := acctest.Clientset(t)
	ctx := t.Context()
	for name, cidr := range map[string]string{"wide": "0.0.0.0/0", "link-local": "169.254.0.0/16"} {
		pol := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "egress-" + name, Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"reach": name}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
				Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr}}}}},
			},
		}
		if _, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, pol, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "builder-admin", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "builder", Namespace: ns}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// reported is the report as the state holds it: per sandbox (keyed by
// name, or "<template>#<i>" for pool members), its violations as "title @
// attribute", and a few attributes.
type reported struct {
	violations []string
	messages   []string
	attrs      map[string]string
}

func readReport(s *terraform.State) (map[string]*reported, map[string]string, error) {
	rs := s.RootModule().Resources[dsAddress]
	if rs == nil {
		return nil, nil, fmt.Errorf("%s not in the state", dsAddress)
	}
	a := rs.Primary.Attributes
	n, _ := strconv.Atoi(a["sandboxes.#"])
	out := map[string]*reported{}
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("sandboxes.%d.", i)
		key := a[p+"name"]
		if a[p+"origin"] == "warm_pool" {
			key = fmt.Sprintf("%s#%d", a[p+"owner"], seen[a[p+"owner"]])
			seen[a[p+"owner"]]++
		}
		r := &reported{attrs: map[string]string{}}
		for k, v := range a {
			if strings.HasPrefix(k, p) {
				r.attrs[strings.TrimPrefix(k, p)] = v
			}
		}
		m, _ := strconv.Atoi(a[p+"violations.#"])
		for j := 0; j < m; j++ {
			q := fmt.Sprintf("%sviolations.%d.", p, j)
			r.violations = append(r.violations, a[q+"title"]+" @ "+a[q+"attribute"])
			r.messages = append(r.messages, a[q+"message"])
		}
		out[key] = r
	}
	return out, a, nil
}

func expectViolations(r *reported, want ...string) error {
	for _, w := range want {
		found := false
		for _, v := range r.violations {
			if v == w {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("no violation %q; got %q", w, r.violations)
		}
	}
	return nil
}

// TestAccIsolationReport_postures: every posture of the configuration is
// flagged with the right title, message and attribute, the hardened pool's
// sandboxes are clean; the report is unknown at plan while what it reports
// is being created, read at plan once it exists, an empty plan follows
// every apply, and a postcondition on it fails the plan with the messages.
func TestAccIsolationReport_postures(t *testing.T) {
	ns := acctest.Namespace(t)
	setUpOutOfBand(t, ns)
	c0 := "pod_template.containers[0].security_context"
	check := func(s *terraform.State) error {
		got, top, err := readReport(s)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"exposed", "hardened#0", "hardened#1", "linklocal", "loosened#0", "powerful", "unmasked", "wide"}
		if fmt.Sprint(keys) != fmt.Sprint(want) {
			return fmt.Errorf("sandboxes %v, want %v", keys, want)
		}
		for _, k := range []string{"hardened#0", "hardened#1"} {
			h := got[k]
			if len(h.violations) != 0 {
				return fmt.Errorf("%s (hardened) has violations: %q", k, h.violations)
			}
			for attr, v := range map[string]string{
				"runtime.runtime_class_name": "gvisor", "runtime.handler": "runsc", "runtime.gvisor": "true",
				"identity.token_mounted": "false", "process.run_as_non_root": "true", "process.seccomp": "RuntimeDefault",
				"network.ingress_isolated": "true", "network.egress_isolated": "true", "template": "hardened",
				"network.egress.metadata_server_ipv4.verdict": "denied", "network.egress.same_template.verdict": "denied",
				"network.ingress.from_sandbox_router.verdict": "allowed", "network.policies.0": "isolate-execution-sandboxes",
			} {
				if h.attrs[attr] != v {
					return fmt.Errorf("%s: %s = %q, want %q", k, attr, h.attrs[attr], v)
				}
			}
			if h.attrs["runtime.node"] == "" || h.attrs["pod"] == "" {
				return fmt.Errorf("%s: no pod or node: %v", k, h.attrs)
			}
		}
		if err := expectViolations(got["loosened#0"],
			"Sandbox runs without gVisor @ pod_template.runtime_class_name",
			"Service account token mounted into the sandbox @ pod_template.automount_service_account_token",
			"Sandbox runs as root @ "+c0+".run_as_user",
			"Sandbox runs without a syscall filter @ pod_template.security_context.seccomp_profile.type",
			"Privileged sandbox container @ "+c0+".privileged",
			"Privilege escalation allowed @ "+c0+".allow_privilege_escalation",
			"Capabilities added @ "+c0+".capabilities.add",
			"Not all capabilities dropped @ "+c0+".capabilities.drop",
			"Sandbox shares a host namespace @ pod_template.pod_spec_overrides",
			"Host directory mounted into the sandbox @ pod_template.pod_spec_overrides",
			"Sandbox runs without AppArmor @ pod_template.pod_spec_overrides",
		); err != nil {
			return fmt.Errorf("loosened: %w", err)
		}
		if l := got["loosened#0"].attrs; l["process.host_network"] != "true" || l["process.host_path_volumes.0"] != "/" || l["network.egress.metadata_server_ipv4.verdict"] != "allowed" {
			return fmt.Errorf("loosened: host network %q, hostPath %q, metadata %q", l["process.host_network"], l["process.host_path_volumes.0"], l["network.egress.metadata_server_ipv4.verdict"])
		}
		if err := expectViolations(got["exposed"],
			"No NetworkPolicy isolates the sandbox's ingress @ network.ingress_isolated",
			"No NetworkPolicy isolates the sandbox's egress @ network.egress_isolated",
			"Metadata server reachable @ network.egress.metadata_server_ipv4",
		); err != nil {
			return fmt.Errorf("exposed: %w", err)
		}
		for name, policy := range map[string]string{"wide": "egress-wide", "linklocal": "egress-link-local"} {
			r := got[name]
			if fmt.Sprint(r.violations) != "[Metadata server reachable @ network.egress.metadata_server_ipv4]" {
				if name == "wide" {
					// 0.0.0.0/0 also holds the API server's addresses.
					if err := expectViolations(r, "Metadata server reachable @ network.egress.metadata_server_ipv4",
						"Kubernetes API reachable @ network.egress.kubernetes_api_service"); err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
				} else {
					return fmt.Errorf("%s: violations %q", name, r.violations)
				}
			}
			if !strings.Contains(r.messages[0], policy) || r.attrs["network.egress.metadata_server_ipv4.allowed_by.0"] != policy {
				return fmt.Errorf("%s: the metadata verdict does not name %s: %q, %v", name, policy, r.messages[0], r.attrs["network.egress.metadata_server_ipv4.allowed_by.0"])
			}
		}
		if u := got["unmasked"]; fmt.Sprint(u.violations) != "[Unmasked /proc @ pod_template.pod_spec_overrides]" {
			return fmt.Errorf("unmasked: violations %q", u.violations)
		}
		p := got["powerful"]
		if err := expectViolations(p,
			"Service account token mounted into the sandbox @ pod_template.automount_service_account_token",
			"Sandbox's service account is powerful @ pod_template.service_account_name"); err != nil {
			return fmt.Errorf("powerful: %w", err)
		}
		if p.attrs["identity.service_account"] != "builder" || p.attrs["identity.token_mounted"] != "true" ||
			p.attrs["identity.permissions.0"] != "get secrets" || p.attrs["identity.permissions.#"] != "3" {
			return fmt.Errorf("powerful: identity %v", p.attrs)
		}
		total := 0
		for _, r := range got {
			total += len(r.violations)
		}
		if top["violations.#"] != strconv.Itoa(total) || top["summary.violations"] != strconv.Itoa(total) ||
			top["summary.sandboxes"] != "8" || top["summary.clean"] != "2" || top["summary.pods"] != "8" {
			return fmt.Errorf("summary %v (violations.# %s), %d violations in the sandboxes", top["summary.sandboxes"], top["violations.#"], total)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The objects do not exist at plan: the report depends on
				// them, so Terraform reads it at apply.
				Config: postureConfig(ns, reportBlock(ns, true, "")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectUnknownOutputValue("violations")},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: check,
			},
			{
				// Without depends_on the report is read during plan.
				Config: postureConfig(ns, reportBlock(ns, false, "")+`
output "clean_at_plan" {
  value = data.agentsandbox_isolation_report.all.summary.clean
}
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectKnownOutputValue("clean_at_plan", knownvalue.Int64Exact(2))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dsAddress, tfjsonpath.New("id"), knownvalue.StringExact(ns)),
				},
				Check: check,
			},
			{
				// A postcondition fails the plan, naming each violation.
				Config: postureConfig(ns, reportBlock(ns, false, `
  lifecycle {
    postcondition {
      condition     = length(self.violations) == 0
      error_message = join("\n", [for v in self.violations : "${v.sandbox}: ${v.title} (${v.attribute})"])
    }
  }`)),
				ExpectError: regexp.MustCompile(`(?s)Resource postcondition failed.*/exposed: No NetworkPolicy isolates\s+the\s+sandbox's\s+ingress`),
			},
			{
				// A selector narrows it to the hardened pool: clean.
				Config: postureConfig(ns, fmt.Sprintf(`
data "agentsandbox_isolation_report" "all" {
  namespace = %[1]q
  selector  = "app.kubernetes.io/component=execution-sandbox,!reach"
}

data "agentsandbox_isolation_report" "hardened" {
  namespace = %[1]q
  selector  = "app.kubernetes.io/component=execution-sandbox,!reach"
  lifecycle {
    postcondition {
      condition     = self.summary.sandboxes == 5 && self.summary.clean == 2
      error_message = "want 5 sandboxes, 2 clean: ${jsonencode(self.summary)}"
    }
  }
}
`, ns)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dsAddress, tfjsonpath.New("id"), knownvalue.StringExact(ns+"?app.kubernetes.io/component=execution-sandbox,!reach")),
					statecheck.ExpectKnownValue(dsAddress, tfjsonpath.New("summary").AtMapKey("sandboxes"), knownvalue.Int64Exact(5)),
				},
			},
		},
	})
}

// TestAccIsolationReport_cost: one report costs one list per kind and
// four SubjectAccessReviews per service account in use, whatever the
// number of sandboxes: no request per sandbox.
func TestAccIsolationReport_cost(t *testing.T) {
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	rc := rest.CopyConfig(acctest.RESTConfig(t))
	rc.Wrap(kube.WrapTransport) // the provider's counting transport
	kc, err := kube.NewClientForRESTConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "t" {
  name                      = "t"
  namespace                 = %[1]q
  network_policy_management = "Unmanaged"
  pod_template = {
    containers = [{
      name      = "agent"
      image     = "registry.example/python-runtime:1"
      resources = { limits = { cpu = "100m", memory = "64Mi" } }
    }]
  }
}

resource "agentsandbox_warm_pool" "t" {
  name      = "t"
  namespace = %[1]q
  template  = agentsandbox_sandbox_template.t.name
  replicas  = 10
}
`, ns)),
			Check: func(*terraform.State) error {
				kube.ResetRequestCounts()
				t0 := time.Now()
				sandboxes, pods, err := isolationreport.ReportCounts(context.Background(), kc, ns)
				elapsed := time.Since(t0)
				if err != nil {
					return err
				}
				counts := kube.RequestCounts()
				t.Logf("one report of %d sandboxes: %d requests in %s (read and analysis): %v", sandboxes, kube.RequestCount(), elapsed.Round(time.Millisecond), counts)
				if sandboxes != 10 || pods != 10 {
					return fmt.Errorf("%d sandboxes, %d pods; want 10 of each", sandboxes, pods)
				}
				// 7 lists + 2 GETs (the kubernetes Service, the sandbox
				// router's Deployment, absent here) + 4 reviews of the one
				// account.
				if n := kube.RequestCount(); n != 13 {
					return fmt.Errorf("%d requests, want 13: %v", n, counts)
				}
				// Every read is a different collection (or the one
				// Service): none is sent twice, none names a sandbox or pod.
				for route, n := range counts {
					if strings.HasPrefix(route, "GET ") && n != 1 || strings.Contains(route, "pods/{name}") || strings.Contains(route, "sandboxes/{name}") {
						return fmt.Errorf("%s sent %d times", route, n)
					}
				}
				return nil
			},
		}},
	})
}
