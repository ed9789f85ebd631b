package networkpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_network_policy"}, DataSources: []string{"agentsandbox_network_policy"},
		Sources: []string{".", "../../netrules"}}.Check)
}

var fam = acctest.Family{ResourceType: networkpolicy.ResourceType, GVR: networkpolicy.Kind.GVR}

const address = networkpolicy.ResourceType + ".test"

var gvr = networkpolicy.Kind.GVR

// expectWrittenEqualsRendered checks the central promise of the resource:
// the policy stored in the cluster is exactly the one `rendered` shows. The
// comparison is deliberately independent of the provider's own
// normalisation: it parses both as JSON and only accounts for the one thing
// the API server is known to do, dropping empty rule lists.
func expectWrittenEqualsRendered(address string) statecheck.StateCheck {
	return writtenCheck{address: address}
}

type writtenCheck struct{ address string }

func (c writtenCheck) CheckState(ctx context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil || req.State.Values == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.address {
			continue
		}
		ns, _ := r.AttributeValues["namespace"].(string)
		name, _ := r.AttributeValues["name"].(string)
		rendered, _ := r.AttributeValues["rendered"].(string)
		obj, err := acctest.GetObject(ctx, acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name})
		if err != nil {
			resp.Error = fmt.Errorf("%s: %w", c.address, err)
			return
		}
		live := jsonValue(obj.Object["spec"]).(map[string]any)
		for _, k := range []string{"ingress", "egress"} {
			if _, ok := live[k]; !ok {
				live[k] = []any{}
			}
		}
		var want any
		if err := json.Unmarshal([]byte(rendered), &want); err != nil {
			resp.Error = fmt.Errorf("%s: rendered is not JSON: %w", c.address, err)
			return
		}
		if !reflect.DeepEqual(live, want) {
			resp.Error = fmt.Errorf("%s: the cluster holds\n%s\nbut rendered is\n%s", c.address, mustJSON(live), rendered)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", c.address)
}

// jsonValue passes v through JSON, so that numbers and maps compare as they
// do in a parsed document.
func jsonValue(v any) any {
	var out any
	_ = json.Unmarshal([]byte(mustJSON(v)), &out)
	return out
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonEquals is a knownvalue check for the `rendered` attribute.
func jsonEquals(want string) knownvalue.Check {
	return knownvalue.StringFunc(func(got string) error {
		if !reflect.DeepEqual(jsonValue(json.RawMessage(got)), jsonValue(json.RawMessage(want))) {
			return fmt.Errorf("rendered =\n%s\nwant\n%s", got, want)
		}
		return nil
	})
}

// The walkthrough's "isolate-untrusted-sandboxes", shaped as the defaults
// shape it: the sandboxes of one template, ingress only from the router.
func testAccNetworkPolicyConfig_basic(ns, name string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name      = %[1]q
  namespace = %[2]q
  template  = "python-analytics-template"
}
`, name, ns))
}

func TestAccNetworkPolicy_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("isolate")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: testAccNetworkPolicyConfig_basic(ns, name),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("allow_dns"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("allow_internet"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("block_metadata_server"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("allow_egress"), knownvalue.Null()),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("ingress"), knownvalue.ListExact([]knownvalue.Check{
				knownvalue.ObjectExact(map[string]knownvalue.Check{
					"namespace_selector": knownvalue.ObjectExact(map[string]knownvalue.Check{
						"match_labels":      knownvalue.MapExact(map[string]knownvalue.Check{"kubernetes.io/metadata.name": knownvalue.StringExact("agent-sandbox-system")}),
						"match_expressions": knownvalue.Null(),
					}),
					"pod_selector": knownvalue.ObjectExact(map[string]knownvalue.Check{
						"match_labels":      knownvalue.MapExact(map[string]knownvalue.Check{"app": knownvalue.StringExact("sandbox-router")}),
						"match_expressions": knownvalue.Null(),
					}),
					"ip_block": knownvalue.Null(),
					"ports": knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectExact(map[string]knownvalue.Check{
						"port": knownvalue.StringExact("8888"), "end_port": knownvalue.Null(), "protocol": knownvalue.StringExact("TCP"),
					})}),
				}),
			})),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("rendered"), jsonEquals(`{
			  "podSelector": {"matchLabels": {"agents.x-k8s.io/sandbox-template-ref-hash": "178c61b7"}},
			  "policyTypes": ["Ingress", "Egress"],
			  "ingress": [{
			    "from": [{
			      "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "agent-sandbox-system"}},
			      "podSelector": {"matchLabels": {"app": "sandbox-router"}}
			    }],
			    "ports": [{"port": 8888, "protocol": "TCP"}]
			  }],
			  "egress": []
			}`)),
			expectWrittenEqualsRendered(address),
			// The empty egress list too: that is what lets apply remove
			// rules added out of band.
			acctest.ExpectObject(address, gvr, acctest.OwnedBy("agentsandbox", ".spec.podSelector", ".spec.policyTypes", ".spec.ingress", ".spec.egress")),
		},
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
	}))
}

func hasLabels(want map[string]string, absent ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		got := obj.GetLabels()
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("label %s = %q, want %q (labels %v)", k, got[k], v, got)
			}
		}
		for _, k := range absent {
			if _, ok := got[k]; ok {
				return fmt.Errorf("label %s still set (labels %v)", k, got)
			}
		}
		return nil
	}
}

func TestAccNetworkPolicy_update(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("policy")
	airGapped := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name         = %[1]q
  namespace    = %[2]q
  pod_selector = { match_labels = { "sandbox-tier" = "untrusted" } }
  ingress      = []
  labels       = { team = "a" }
}
`, name, ns))
	open := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_selector = {
    match_labels      = { "sandbox-tier" = "untrusted" }
    match_expressions = [{ key = "legacy", operator = "DoesNotExist" }]
  }
  ingress = [
    {
      namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = "agent-orchestrator" } }
      ports              = [{ port = "http" }, { port = 9000, end_port = 9010, protocol = "UDP" }]
    },
    { ip_block = { cidr = "192.0.2.0/24", except = ["192.0.2.128/25"] } },
  ]
  allow_dns      = true
  allow_internet = true
  allow_egress = [
    { cidr = "0.0.0.0/0", except = ["10.0.0.0/8"], ports = [{ port = 443 }] },
    { cidr = "::/0", ports = [{ port = 443 }] },
  ]
  labels      = { team = "b", tier = "gold" }
  annotations = { "example.com/owner" = "platform" }
}
`, name, ns))
	toTemplate := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name                  = %[1]q
  namespace             = %[2]q
  template              = "python"
  allow_egress          = [{ cidr = "169.254.169.254/32", ports = [{ port = 80 }] }]
  block_metadata_server = false
}
`, name, ns))

	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: airGapped,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("rendered"), jsonEquals(`{
				  "podSelector": {"matchLabels": {"sandbox-tier": "untrusted"}},
				  "policyTypes": ["Ingress", "Egress"], "ingress": [], "egress": []
				}`)),
				expectWrittenEqualsRendered(address),
				acctest.ExpectObject(address, gvr, hasLabels(map[string]string{"team": "a"})),
			},
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config: open,
			ConfigStateChecks: []statecheck.StateCheck{
				// Both broad ranges get the metadata server carved out.
				statecheck.ExpectKnownValue(address, tfjsonpath.New("rendered"), knownvalue.StringFunc(func(s string) error {
					for _, want := range []string{`"169.254.169.254/32"`, `"fd00:ec2::254/128"`, `"169.254.20.10/32"`, `"fc00::/7"`, `"port": "http"`, `"endPort": 9010`} {
						if !strings.Contains(s, want) {
							return fmt.Errorf("rendered lacks %s:\n%s", want, s)
						}
					}
					return nil
				})),
				expectWrittenEqualsRendered(address),
				acctest.ExpectObject(address, gvr, hasLabels(map[string]string{"team": "b", "tier": "gold"})),
			},
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
		resource.TestStep{
			Config: toTemplate,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_selector"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("labels"), knownvalue.Null()),
				expectWrittenEqualsRendered(address),
				// Labels this configuration no longer sets are removed.
				acctest.ExpectObject(address, gvr, hasLabels(nil, "team", "tier")),
			},
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
	))
}

// templateSpec is the spec of a SandboxTemplate made through the API, so
// that import can name the template a policy selects (the label holds only
// a hash of the name). management is its networkPolicyManagement: with
// Managed, the controller adds a policy of its own.
func templateSpec(management string) map[string]any {
	return map[string]any{
		"networkPolicyManagement": management,
		"podTemplate": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "python", "image": "registry.example/python:1"}},
		}},
	}
}

func TestAccNetworkPolicy_import(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", templateSpec("Unmanaged"))
	name := acctest.RandomName("import")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name      = "%[1]s-t"
  namespace = %[2]q
  template  = "python"
  allow_dns = true
  labels    = { team = "a" }
}

resource "agentsandbox_network_policy" "selector" {
  name      = "%[1]s-s"
  namespace = %[2]q
  pod_selector = {
    match_labels      = { "app.kubernetes.io/component" = "execution-sandbox" }
    match_expressions = [{ key = "tier", operator = "In", values = ["a", "b"] }]
  }
  ingress = [
    { namespace_selector = {}, ports = [{ port = "http" }] },
    { pod_selector = { match_labels = { role = "probe" } } },
    { ip_block = { cidr = "2001:db8::/32", except = ["2001:db8:1::/48"] }, ports = [{ protocol = "SCTP" }] },
  ]
  allow_internet = true
  allow_egress = [
    { cidr = "0.0.0.0/0", except = ["10.0.0.0/8"], ports = [{ port = 443 }, { port = 8000, end_port = 8100 }] },
    { cidr = "169.254.169.254/32", ports = [{ port = 80 }] },
  ]
  block_metadata_server = false
  annotations           = { "example.com/reviewed-by" = "secteam" }
}
`, name, ns))
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:            cfg,
			ConfigStateChecks: []statecheck.StateCheck{expectWrittenEqualsRendered(address), expectWrittenEqualsRendered(networkpolicy.ResourceType + ".selector")},
			ConfigPlanChecks:  acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config:            cfg,
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true,
		},
		resource.TestStep{
			Config:            cfg,
			ResourceName:      networkpolicy.ResourceType + ".selector",
			ImportState:       true,
			ImportStateVerify: true,
		},
		resource.TestStep{
			Config:        cfg,
			ResourceName:  address,
			ImportState:   true,
			ImportStateId: "a/b/c",
			ExpectError:   regexp.MustCompile(`not of the form <namespace>/<name>`),
		},
	))
}

func TestAccNetworkPolicy_disappears(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("gone")
	cfg := testAccNetworkPolicyConfig_basic(ns, name)
	// Deleted out of band: the plan creates it again.
	resource.Test(t, fam.Case(t, fam.Disappears(cfg, expectWrittenEqualsRendered(address))...))
}

func TestAccNetworkPolicy_drift(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("drift")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  name      = %[1]q
  namespace = %[2]q
  template  = "python"
  allow_dns = true
  labels    = { team = "a" }
}
`, name, ns))
	ref := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}
	var planned string
	// The refreshed state a plan starts from shows the out-of-band edit,
	// and the plan puts back exactly the configured policy.
	repaired := func(visible ...string) resource.ConfigPlanChecks {
		return fam.Planned(plancheck.ResourceActionUpdate,
			acctest.ExpectBefore(address, func(before map[string]any) error {
				s, _ := before["rendered"].(string)
				for _, w := range visible {
					if !strings.Contains(s, w) {
						return fmt.Errorf("refreshed rendered lacks %s, so the drift is invisible:\n%s", w, s)
					}
				}
				return nil
			}),
			plancheck.ExpectKnownValue(address, tfjsonpath.New("rendered"), knownvalue.StringFunc(func(s string) error {
				if s != planned {
					return fmt.Errorf("planned rendered =\n%s\nwant the configured\n%s", s, planned)
				}
				return nil
			})),
		)
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				expectWrittenEqualsRendered(address),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("rendered"), knownvalue.StringFunc(func(s string) error {
					planned = s
					return nil
				})),
			},
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			// Someone opens the policy with a merge patch: all egress and all
			// ingress allowed. Fields the provider set as empty lists are
			// still its own, so apply removes the additions.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{
				  "metadata": {"labels": {"team": "changed"}},
				  "spec": {"egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}], "ingress": [{}]}
				}`)
			},
			Config:            cfg,
			ConfigPlanChecks:  repaired(`"cidr": "0.0.0.0/0"`, `"ingress": [`+"\n    {}"),
			ConfigStateChecks: []statecheck.StateCheck{expectWrittenEqualsRendered(address), acctest.ExpectObject(address, gvr, hasLabels(map[string]string{"team": "a"}))},
		},
		resource.TestStep{
			// A JSON patch re-targets the policy and drops egress isolation.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.JSONPatchType, `[
				  {"op": "replace", "path": "/spec/podSelector", "value": {}},
				  {"op": "replace", "path": "/spec/policyTypes", "value": ["Ingress"]}
				]`)
			},
			Config:            cfg,
			ConfigPlanChecks:  repaired(`"podSelector": {}`, `"policyTypes": [`+"\n    \"Ingress\"\n  ]"),
			ConfigStateChecks: []statecheck.StateCheck{expectWrittenEqualsRendered(address)},
		},
	))
}

// TestAccNetworkPolicy_badInput runs a few bad configurations through the
// terraform CLI: they fail at plan, and no request reaches the cluster.
// (Terraform 1.11 shows the resource's line for a path into a list of
// nested attributes, so the detail always quotes the offending value; the
// exact attribute paths are checked in TestBadInputFailsAtPlanWithItsPath.)
func TestAccNetworkPolicy_badInput(t *testing.T) {
	body := func(attrs string) string {
		return acctest.Config(`
resource "agentsandbox_network_policy" "test" {
  name     = "bad"
  template = "python"
` + attrs + `
}
`)
	}
	resource.Test(t, fam.Case(t, acctest.RefusedAtPlan(t,
		acctest.BadConfig{Config: body(`  allow_egress = [{ cidr = "10.0.0.1/8" }]`), Error: `(?s)Invalid CIDR.*"10.0.0.1/8".*write "10.0.0.0/8"`},
		acctest.BadConfig{Config: body(`  allow_egress = [{ cidr = "169.254.169.254/32" }]`), Error: `(?s)Metadata server allowed while blocked.*block_metadata_server = false`},
		acctest.BadConfig{Config: body(`  ingress = [{ ports = [{ port = 70000 }] }]`), Error: `(?s)Invalid port.*1 to 65535`},
	)...))
}

// TestAccNetworkPolicy_requestCost measures what the provider sends to the
// API server for n policies. A no-change refresh must cost exactly one GET
// per policy and nothing else (no discovery, no OpenAPI, no LIST); the
// other operations are logged as measurements.
func TestAccNetworkPolicy_requestCost(t *testing.T) {
	const n = 10
	ns := acctest.Namespace(t)
	name := acctest.RandomName("cost")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_network_policy" "test" {
  count          = %[3]d
  name           = "%[1]s-${count.index}"
  namespace      = %[2]q
  template       = "python"
  allow_internet = true
}
`, name, ns, n))
	cost := acctest.NewRequestCost(t, n, "policies")
	tc := fam.Case(t, append([]resource.TestStep{
		cost.CreateStep(cfg, "create (plan + apply)"),
		cost.RefreshStep("GET /apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/{name}", 0),
	}, cost.PlanSteps(cfg)...)...)
	tc = cost.MeasureDestroy(tc, "destroy (refresh + delete, waiting until gone)")
	resource.Test(t, tc)
}

// TestAccNetworkPolicy_examplePlans plans the documentation's example
// against the provider, so the registry page never shows a configuration
// the schema or its validation refuses.
func TestAccNetworkPolicy_examplePlans(t *testing.T) {
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config:             acctest.Config(acctest.ExampleConfig(t, "agentsandbox_network_policy")),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}))
}
