package networkpolicy_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// These tests drive the provider through the plugin protocol, as Terraform
// does, without a cluster: validation and planning must not need one.

// base is a valid configuration that each bad-input case breaks in one place.
func base(extra map[string]any) map[string]any {
	cfg := map[string]any{"name": "isolate", "namespace": "agents", "template": "python"}
	maps.Copy(cfg, extra)
	return cfg
}

func egress(cidr string, extra map[string]any) map[string]any {
	e := map[string]any{"cidr": cidr}
	maps.Copy(e, extra)
	return map[string]any{"allow_egress": []any{e}}
}

func ports(p ...map[string]any) []any {
	out := make([]any, len(p))
	for i := range p {
		out[i] = p[i]
	}
	return out
}

func TestBadInputFailsAtPlanWithItsPath(t *testing.T) {
	pt.New(t, provider.New("test")).ExpectRefused(t, networkpolicy.ResourceType, []pt.BadInput{
		pt.Refused("bad CIDR: host bits", base(egress("10.0.0.1/8", nil)), "allow_egress[0].cidr", `"10.0.0.0/8"`),
		pt.Refused("bad CIDR: not one", base(egress("10.0.0.0", nil)), "allow_egress[0].cidr", "not a CIDR"),
		pt.Refused("bad CIDR: IPv6 spelling", base(egress("FD00::/8", nil)), "allow_egress[0].cidr", `"fd00::/8"`),
		pt.Refused("bad CIDR in except", base(egress("10.0.0.0/8", map[string]any{"except": []any{"10.1.0.0/16", "10.2.0.0.0/16"}})), "allow_egress[0].except[1]", "not a CIDR"),
		pt.Refused("except outside cidr", base(egress("10.0.0.0/8", map[string]any{"except": []any{"192.168.0.0/16"}})), "allow_egress[0].except[0]", "not strictly inside 10.0.0.0/8"),
		pt.Refused("except equal to cidr", base(egress("10.0.0.0/8", map[string]any{"except": []any{"10.0.0.0/8"}})), "allow_egress[0].except[0]", "strictly inside"),
		pt.Refused("except of the other family", base(egress("0.0.0.0/0", map[string]any{"except": []any{"fc00::/7"}})), "allow_egress[0].except[0]", "strictly inside"),
		pt.Refused("ingress ip_block except outside", base(map[string]any{"ingress": []any{map[string]any{"ip_block": map[string]any{"cidr": "192.0.2.0/24", "except": []any{"198.51.100.0/24"}}}}}), "ingress[0].ip_block.except[0]", "strictly inside"),
		pt.Refused("port 0", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "0"})})), "allow_egress[0].ports[0].port", "1 to 65535"),
		pt.Refused("port 70000", base(map[string]any{"ingress": []any{map[string]any{"ports": ports(map[string]any{"port": "70000"})}}}), "ingress[0].ports[0].port", "1 to 65535"),
		pt.Refused("port with leading zero", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "0443"})})), "allow_egress[0].ports[0].port", "write 443"),
		pt.Refused("bad port name", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "Web_UI"})})), "allow_egress[0].ports[0].port", "port name"),
		pt.Refused("end_port 70000", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "1", "end_port": 70000})})), "allow_egress[0].ports[0].end_port", "65535"),
		pt.Refused("end_port before port", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "2000", "end_port": 1000})})), "allow_egress[0].ports[0].end_port", "lower than port 2000"),
		pt.Refused("end_port with a named port", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "http", "end_port": 1000})})), "allow_egress[0].ports[0].end_port", "numeric start"),
		pt.Refused("end_port without port", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"end_port": 1000})})), "allow_egress[0].ports[0].end_port", "set port"),
		pt.Refused("bad protocol", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "53", "protocol": "ICMP"})})), "allow_egress[0].ports[0].protocol", "TCP, UDP, SCTP"),
		pt.Refused("lower-case protocol", base(map[string]any{"ingress": []any{map[string]any{"ports": ports(map[string]any{"protocol": "udp"})}}}), "ingress[0].ports[0].protocol", `write "UDP"`),
		pt.Refused("metadata allowed while blocked (v4)", base(egress("169.254.169.254/32", nil)), "allow_egress[0].cidr", "block_metadata_server = false"),
		pt.Refused("metadata allowed while blocked (v6)", base(egress("fd00:ec2::254/128", nil)), "allow_egress[0].cidr", "cloud metadata server"),
		pt.Refused("metadata allowed while explicitly blocked", base(map[string]any{"block_metadata_server": true, "allow_egress": []any{map[string]any{"cidr": "169.254.169.254/32"}}}), "allow_egress[0].cidr", "cloud metadata server"),
		pt.Refused("template and pod_selector", base(map[string]any{"pod_selector": map[string]any{}}), "template", "pod_selector"),
		pt.Refused("bad template name", base(map[string]any{"template": "Python_3"}), "template", "RFC 1123"),
		pt.Refused("bad label key", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_labels": map[string]string{"bad key": "x"}}}), `pod_selector.match_labels["bad key"]`, "label key"),
		pt.Refused("bad label value", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_labels": map[string]string{"app": "no spaces"}}}), `pod_selector.match_labels["app"]`, "label value"),
		pt.Refused("bad expression operator", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "app", "operator": "Equals", "values": []any{"x"}}}}}), "pod_selector.match_expressions[0].operator", "In"),
		pt.Refused("In without values", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "app", "operator": "In"}}}}), "pod_selector.match_expressions[0].values", "at least one"),
		pt.Refused("Exists with values", base(map[string]any{"ingress": []any{map[string]any{"namespace_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "team", "operator": "Exists", "values": []any{"a"}}}}}}}), "ingress[0].namespace_selector.match_expressions[0].values", "remove values"),
		pt.Refused("bad selector value in expression", base(map[string]any{"ingress": []any{map[string]any{"pod_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "team", "operator": "In", "values": []any{"a b"}}}}}}}), "ingress[0].pod_selector.match_expressions[0].values[0]", "label value"),
		pt.Refused("ip_block with a selector", base(map[string]any{"ingress": []any{map[string]any{"pod_selector": map[string]any{}, "ip_block": map[string]any{"cidr": "192.0.2.0/24"}}}}), "ingress[0].ip_block", "pod_selector"),
		pt.Refused("bad policy label", base(map[string]any{"labels": map[string]string{"agents.x-k8s.io/owner": "me"}}), `labels["agents.x-k8s.io/owner"]`, "Reserved"),
	})
}

func TestNeitherSelectorFailsAtPlan(t *testing.T) {
	errs := pt.Errors(pt.New(t, provider.New("test")).ValidateResource(t, networkpolicy.ResourceType, map[string]any{"name": "isolate"}))
	if len(errs) == 0 || !strings.Contains(errs[0].Detail, "template") || !strings.Contains(errs[0].Detail, "pod_selector") {
		t.Fatalf("errors = %v", errs)
	}
}

func TestGoodInputPasses(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	for name, cfg := range map[string]map[string]any{
		"defaults":   base(nil),
		"air-gapped": {"name": "a", "pod_selector": map[string]any{}, "ingress": []any{}},
		"metadata on purpose": base(map[string]any{"block_metadata_server": false, "allow_egress": []any{
			map[string]any{"cidr": "169.254.169.254/32", "ports": ports(map[string]any{"port": "80"})},
		}}),
		"everything": {
			"name": "x", "namespace": "agents", "labels": map[string]string{"team": "ml"},
			"pod_selector": map[string]any{"match_labels": map[string]string{"agents.x-k8s.io/warm-pool-sandbox": "1a2b3c4d"}},
			"ingress": []any{
				map[string]any{"namespace_selector": map[string]any{}, "pod_selector": map[string]any{"match_labels": map[string]string{"app": "router"}},
					"ports": ports(map[string]any{"port": "http"}, map[string]any{"port": "8000", "end_port": 8100, "protocol": "TCP"})},
				map[string]any{"ip_block": map[string]any{"cidr": "2001:db8::/32", "except": []any{"2001:db8:1::/48"}}},
			},
			"allow_dns": true, "allow_internet": true,
			"allow_egress": []any{map[string]any{"cidr": "0.0.0.0/0", "except": []any{"10.0.0.0/8"}, "ports": ports(map[string]any{"port": "443"})}},
		},
		// Values not known yet are not judged.
		"unknowns": base(map[string]any{"block_metadata_server": pt.Unknown, "allow_egress": []any{
			map[string]any{"cidr": "169.254.169.254/32", "except": pt.Unknown, "ports": ports(map[string]any{"port": pt.Unknown, "end_port": 5})},
			map[string]any{"cidr": pt.Unknown, "except": []any{"10.0.0.0/8"}},
		}}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := pt.Errors(s.ValidateResource(t, networkpolicy.ResourceType, cfg)); len(errs) > 0 {
				for _, d := range errs {
					t.Errorf("%s: %s: %s", pt.AttributePath(d.Attribute), d.Summary, d.Detail)
				}
			}
		})
	}
}

// TestPlanRendersWithoutACluster plans a new policy through the protocol:
// `rendered` is known at plan time and no request is sent anywhere.
func TestPlanRendersWithoutACluster(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	before := kube.RequestCount()
	attrs, diags := s.PlanCreate(t, networkpolicy.ResourceType, base(map[string]any{"allow_dns": true}))
	for _, d := range diags {
		t.Errorf("%s: %s: %s", pt.AttributePath(d.Attribute), d.Summary, d.Detail)
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("planning sent %d requests", n)
	}
	var rendered string
	if err := attrs["rendered"].As(&rendered); err != nil || rendered == "" {
		t.Fatalf("rendered = %v (%v), want it known at plan time", attrs["rendered"], err)
	}
	var spec map[string]any
	if err := json.Unmarshal([]byte(rendered), &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec["egress"].([]any)) != 1 || len(spec["ingress"].([]any)) != 1 {
		t.Errorf("rendered = %s", rendered)
	}

	// With an input unknown, so is the rendering (and nothing fails).
	attrs, diags = s.PlanCreate(t, networkpolicy.ResourceType, base(map[string]any{"template": pt.Unknown}))
	if errs := pt.Errors(diags); len(errs) > 0 || attrs == nil {
		t.Fatal(pt.Describe(errs))
	}
	if attrs["rendered"].IsKnown() {
		t.Errorf("rendered = %v, want unknown", attrs["rendered"])
	}
}

// TestPlanWarnsAboutTheControllersPolicyName: naming the policy like the
// one the controller manages for the same template is legal but fights
// with the controller, so the plan says so.
func TestPlanWarnsAboutTheControllersPolicyName(t *testing.T) {
	_, diags := pt.New(t, provider.New("test")).PlanCreate(t, networkpolicy.ResourceType, base(map[string]any{"name": "python-network-policy"}))
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && pt.AttributePath(d.Attribute) == "name" && strings.Contains(d.Detail, "Unmanaged") {
			return
		}
	}
	t.Fatalf("no warning at name: %v", diags)
}
