package networkpolicy_test

import (
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
