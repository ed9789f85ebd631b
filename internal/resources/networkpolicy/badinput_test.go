package networkpolicy_test

import (
	"fmt"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// More of what newcomers write in agentsandbox_network_policy (issue 13),
// beside the cases of plan_test.go: refused at validate on the exact
// attribute, with nothing sent.
func TestBadInputWideTable(t *testing.T) {
	port := func(p map[string]any) map[string]any {
		return base(egress("10.0.0.0/8", map[string]any{"ports": ports(p)}))
	}
	cases := []pt.BadInput{
		pt.Refused("empty name", base(map[string]any{"name": ""}), "name"),
		pt.Refused("name with a slash", base(map[string]any{"name": "agents/isolate"}), "name", `"agents/isolate"`),
		pt.Refused("empty template", base(map[string]any{"template": ""}), "template"),
		pt.Refused("CIDR written any", base(egress("any", nil)), "allow_egress[0].cidr", "not a CIDR"),
		pt.Refused("empty CIDR", base(egress("", nil)), "allow_egress[0].cidr"),
		pt.Refused("CIDR with a port", base(egress("10.0.0.0/8:443", nil)), "allow_egress[0].cidr", "not a CIDR"),
		pt.Refused("empty port", port(map[string]any{"port": ""}), "allow_egress[0].ports[0].port"),
		pt.Refused("port range as text", port(map[string]any{"port": "8000-8080"}), "allow_egress[0].ports[0].port", `"8000-8080"`),
		pt.Refused("two protocols", port(map[string]any{"port": "53", "protocol": "TCP/UDP"}), "allow_egress[0].ports[0].protocol", `"TCP/UDP"`),
		// An allow_egress entry is an IP range or selectors, as a
		// NetworkPolicyPeer is one or the other.
		pt.Refused("range and selector in one entry", base(egress("10.0.0.0/8", map[string]any{
			"pod_selector": map[string]any{"match_labels": map[string]any{"app": "proxy"}},
		})), "allow_egress[0].cidr", "pod_selector"),
		pt.Refused("except without a range", base(map[string]any{"allow_egress": []any{map[string]any{
			"except": []any{"10.1.0.0/16"}, "pod_selector": map[string]any{"match_labels": map[string]any{"app": "proxy"}},
		}}}), "allow_egress[0].except", "cidr"),
		pt.Refused("entry with no destination", base(map[string]any{"allow_egress": []any{map[string]any{
			"ports": ports(map[string]any{"port": "443"}),
		}}}), "allow_egress[0]", "cidr"),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, networkpolicy.ResourceType, cases)
	t.Logf("agentsandbox_network_policy: %d refused at validate (this table)", len(cases))
}

// TestSelectorBadInputEverywhere: a label selector is written in five
// places (the policy's pod_selector, and the namespace and pod selectors of
// an allow_egress entry and of an ingress entry); each mistake a newcomer
// makes in one is refused in every one of them, at its own line.
func TestSelectorBadInputEverywhere(t *testing.T) {
	// at puts selector where the configuration reads it, with what else
	// that place needs to be valid.
	places := []struct {
		path string
		at   func(selector map[string]any) map[string]any
	}{
		{"pod_selector", func(sel map[string]any) map[string]any {
			return base(map[string]any{"template": nil, "pod_selector": sel})
		}},
		{"allow_egress[0].namespace_selector", func(sel map[string]any) map[string]any {
			return base(map[string]any{"allow_egress": []any{map[string]any{"namespace_selector": sel}}})
		}},
		{"allow_egress[0].pod_selector", func(sel map[string]any) map[string]any {
			return base(map[string]any{"allow_egress": []any{map[string]any{"pod_selector": sel}}})
		}},
		{"ingress[0].namespace_selector", func(sel map[string]any) map[string]any {
			return base(map[string]any{"ingress": []any{map[string]any{"namespace_selector": sel}}})
		}},
		{"ingress[0].pod_selector", func(sel map[string]any) map[string]any {
			return base(map[string]any{"ingress": []any{map[string]any{"pod_selector": sel}}})
		}},
	}
	expr := func(key, op string, values ...any) map[string]any {
		e := map[string]any{"key": key, "operator": op}
		if values != nil {
			e["values"] = values
		}
		return map[string]any{"match_expressions": []any{e}}
	}
	mistakes := []struct {
		name     string
		selector map[string]any
		path     string // below the selector
		mention  string
	}{
		{"label key with a space", map[string]any{"match_labels": map[string]any{"app name": "x"}}, `.match_labels["app name"]`, "label key"},
		{"label value with a slash", map[string]any{"match_labels": map[string]any{"app": "a/b"}}, `.match_labels["app"]`, "label value"},
		{"expression key with two slashes", expr("a/b/c", "Exists"), ".match_expressions[0].key", `"a/b/c"`},
		{"operator in lower case", expr("app", "in", "x"), ".match_expressions[0].operator", "In"},
		{"NotIn without values", expr("app", "NotIn"), ".match_expressions[0].values", "at least one"},
		{"DoesNotExist with values", expr("app", "DoesNotExist", "x"), ".match_expressions[0].values", "remove values"},
		{"expression value too long", expr("app", "In", fmt.Sprintf("%064d", 0)), ".match_expressions[0].values[0]", "label value"},
	}
	var cases []pt.BadInput
	for _, p := range places {
		for _, m := range mistakes {
			cases = append(cases, pt.Refused(p.path+": "+m.name, p.at(m.selector), p.path+m.path, m.mention))
		}
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, networkpolicy.ResourceType, cases)
	t.Logf("agentsandbox_network_policy: %d selector mistakes refused at validate", len(cases))
}

// TestPortAndRangeBadInputInIngress: what is refused in allow_egress is
// refused in ingress too, at the ingress entry's line.
func TestPortAndRangeBadInputInIngress(t *testing.T) {
	ingress := func(e map[string]any) map[string]any { return base(map[string]any{"ingress": []any{e}}) }
	cases := []pt.BadInput{
		pt.Refused("ip_block cidr written any", ingress(map[string]any{"ip_block": map[string]any{"cidr": "any"}}), "ingress[0].ip_block.cidr", "not a CIDR"),
		pt.Refused("ip_block cidr with host bits", ingress(map[string]any{"ip_block": map[string]any{"cidr": "192.0.2.1/24"}}), "ingress[0].ip_block.cidr", `"192.0.2.0/24"`),
		pt.Refused("ip_block except not a range", ingress(map[string]any{"ip_block": map[string]any{"cidr": "192.0.2.0/24", "except": []any{"192.0.2.7"}}}),
			"ingress[0].ip_block.except[0]", "not a CIDR"),
		pt.Refused("end_port 70000", ingress(map[string]any{"ports": ports(map[string]any{"port": "8000", "end_port": 70000})}), "ingress[0].ports[0].end_port", "65535"),
		pt.Refused("end_port before port", ingress(map[string]any{"ports": ports(map[string]any{"port": "8080", "end_port": 8000})}), "ingress[0].ports[0].end_port", "lower than port 8080"),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, networkpolicy.ResourceType, cases)
}

// TestRepeatedRuleIsAWarning: an entry that repeats an earlier one is
// harmless (a policy allows the union of its rules) but a mistake all the
// same: validation warns at the repeat, naming the entry it repeats.
func TestRepeatedRuleIsAWarning(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	dns := map[string]any{"cidr": "10.0.0.10/32", "ports": ports(map[string]any{"port": "53", "protocol": "UDP"})}
	diags := s.ValidateResource(t, networkpolicy.ResourceType, base(map[string]any{"allow_egress": []any{dns, map[string]any{"cidr": "10.1.0.0/16"}, dns}}))
	if errs := pt.Errors(diags); len(errs) > 0 {
		t.Fatalf("a repeated rule is refused: %s", pt.Describe(errs))
	}
	pt.ExpectWarningAt(t, diags, "allow_egress[2]", "Repeated rule", "allow_egress[0]")
	router := map[string]any{"pod_selector": map[string]any{"match_labels": map[string]any{"app": "sandbox-router"}}}
	diags = s.ValidateResource(t, networkpolicy.ResourceType, base(map[string]any{"ingress": []any{router, router}}))
	pt.ExpectWarningAt(t, diags, "ingress[1]", "Repeated rule", "ingress[0]")
	// Different ports make a different rule.
	other := map[string]any{"cidr": "10.0.0.10/32", "ports": ports(map[string]any{"port": "53", "protocol": "TCP"})}
	if diags := s.ValidateResource(t, networkpolicy.ResourceType, base(map[string]any{"allow_egress": []any{dns, other}})); len(diags) > 0 {
		t.Errorf("two different rules: %s", pt.Describe(diags))
	}
}
