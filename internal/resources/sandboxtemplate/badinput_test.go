package sandboxtemplate_test

import (
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The wide bad-input table of agentsandbox_sandbox_template (issue 13),
// refused at validate on the exact attribute with nothing sent; the first
// cases are in plan_test.go.

// tpl is a valid template; each case changes one thing through with.
func tpl(with func(cfg, c map[string]any)) map[string]any {
	c := map[string]any{
		"name": "python", "image": "python:3.13",
		"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
	}
	cfg := map[string]any{"name": "python", "namespace": "agents", "pod_template": map[string]any{"containers": []any{c}}}
	if with != nil {
		with(cfg, c)
	}
	return cfg
}

func rules(r map[string]any) func(cfg, c map[string]any) {
	return func(cfg, _ map[string]any) { cfg["network_policy"] = r }
}

func TestBadInputWideTable(t *testing.T) {
	const c0 = "pod_template.containers[0]"
	ingress := func(e map[string]any) map[string]any { return map[string]any{"ingress": []any{e}} }
	egress := func(e map[string]any) map[string]any { return map[string]any{"allow_egress": []any{e}} }
	cases := []pt.BadInput{
		pt.Refused("empty name", tpl(func(cfg, _ map[string]any) { cfg["name"] = "" }), "name"),
		pt.Refused("name with a space", tpl(func(cfg, _ map[string]any) { cfg["name"] = "python template" }), "name", `"python template"`),
		pt.Refused("name too long", tpl(func(cfg, _ map[string]any) { cfg["name"] = strings.Repeat("t", 254) }), "name"),
		pt.Refused("namespace with underscore", tpl(func(cfg, _ map[string]any) { cfg["namespace"] = "team_a" }), "namespace", `"team_a"`),
		pt.Refused("management in lower case", tpl(func(cfg, _ map[string]any) { cfg["network_policy_management"] = "managed" }), "network_policy_management", `"managed"`),
		pt.Refused("env policy typo", tpl(func(cfg, _ map[string]any) { cfg["env_vars_injection_policy"] = "Allow" }), "env_vars_injection_policy", `"Allow"`),
		pt.Refused("claim policy empty", tpl(func(cfg, _ map[string]any) { cfg["volume_claim_templates_policy"] = "" }), "volume_claim_templates_policy"),
		pt.Refused("image with capitals", tpl(func(_, c map[string]any) { c["image"] = "ghcr.io/Acme/Agent:1" }), c0+".image", "ghcr.io/acme/agent:1"),
		pt.Refused("image with md5 digest", tpl(func(_, c map[string]any) { c["image"] = "python@md5:0123" }), c0+".image", "digest"),
		pt.Refused("zero limits", tpl(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "0", "memory": "1Gi"}}
		}), c0+`.resources.limits["cpu"]`, "zero"),
		pt.Refused("memory 2GB", tpl(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "2GB"}}
		}), c0+`.resources.limits["memory"]`, `"2Gi"`),
		pt.Refused("resource name typo", tpl(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi", "memroy": "1Gi"}}
		}), c0+`.resources.limits["memroy"]`),
		pt.Refused("CIDR without prefix length", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0"}))), "network_policy.allow_egress[0].cidr", `"10.0.0.0"`),
		pt.Refused("CIDR /33", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/33"}))), "network_policy.allow_egress[0].cidr", `"10.0.0.0/33"`),
		pt.Refused("CIDR as a hostname", tpl(rules(egress(map[string]any{"cidr": "pypi.org"}))), "network_policy.allow_egress[0].cidr", `"pypi.org"`),
		pt.Refused("port zero", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/8", "ports": []any{map[string]any{"port": "0"}}}))),
			"network_policy.allow_egress[0].ports[0].port", `"0"`),
		pt.Refused("port name with capitals", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/8", "ports": []any{map[string]any{"port": "HTTP"}}}))),
			"network_policy.allow_egress[0].ports[0].port", `"HTTP"`),
		pt.Refused("protocol in lower case", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/8", "ports": []any{map[string]any{"port": "443", "protocol": "tcp"}}}))),
			"network_policy.allow_egress[0].ports[0].protocol", `"tcp"`),
		pt.Refused("end port below port", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/8", "ports": []any{map[string]any{"port": "443", "end_port": 80}}}))),
			"network_policy.allow_egress[0].ports[0].end_port"),
		pt.Refused("except outside the CIDR", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/8", "except": []any{"192.168.0.0/16"}}))),
			"network_policy.allow_egress[0].except[0]", "192.168.0.0/16"),
		pt.Refused("ingress label key with spaces", tpl(rules(ingress(map[string]any{"pod_selector": map[string]any{"match_labels": map[string]any{"my app": "x"}}}))),
			`network_policy.ingress[0].pod_selector.match_labels["my app"]`),
		pt.Refused("selector operator typo", tpl(rules(ingress(map[string]any{"pod_selector": map[string]any{"match_expressions": []any{
			map[string]any{"key": "app", "operator": "Equals", "values": []any{"x"}}}}}))),
			"network_policy.ingress[0].pod_selector.match_expressions[0].operator", `"Equals"`),
		// Label values in the pod's selectors and node requirements: the API
		// server refuses such a pod (metav1validation.ValidateLabelSelectorRequirement,
		// core validation ValidateNodeSelectorRequirement), so the plan does.
		pt.Refused("anti-affinity selector value with a space", tpl(func(cfg, c map[string]any) {
			cfg["pod_template"] = map[string]any{"containers": []any{c}, "affinity": map[string]any{"pod_anti_affinity": map[string]any{"preferred": []any{
				map[string]any{"weight": 1, "topology_key": "kubernetes.io/hostname", "label_selector": map[string]any{"match_expressions": []any{
					map[string]any{"key": "app", "operator": "In", "values": []any{"my agent"}}}}}}}}}
		}), "pod_template.affinity.pod_anti_affinity.preferred[0].label_selector.match_expressions[0].values[0]", `"my agent"`, "label value"),
		pt.Refused("node affinity value with a slash", tpl(func(cfg, c map[string]any) {
			cfg["pod_template"] = map[string]any{"containers": []any{c}, "affinity": map[string]any{"node_affinity": map[string]any{"required": []any{
				map[string]any{"match_expressions": []any{map[string]any{"key": "pool", "operator": "In", "values": []any{"gpu/a100"}}}}}}}}
		}), "pod_template.affinity.node_affinity.required[0].match_expressions[0].values[0]", `"gpu/a100"`, "label value"),
		pt.Refused("claim template storage 5 gigs", tpl(func(cfg, _ map[string]any) {
			cfg["volume_claim_templates"] = []any{map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "5gb"}}}}
		}), "volume_claim_templates[0].resources.requests.storage", `"5Gi"`),
		// Issue 37: each names its nested attribute, in the path and in
		// the text (Terraform cannot quote a nested attribute's line).
		pt.Refused("env name with =", tpl(func(_, c map[string]any) {
			c["env"] = []any{map[string]any{"name": "A=B", "value": "x"}}
		}), c0+".env[0].name", "A=B", "other than '='"),
		pt.Refused("image with a space", tpl(func(_, c map[string]any) { c["image"] = "python 3.13" }), c0+".image", `"python 3.13"`),
		pt.Refused("duplicate container names", tpl(func(cfg, c map[string]any) {
			cfg["pod_template"] = map[string]any{"containers": []any{c, c}}
		}), "pod_template.containers[1].name", `"python"`),
		pt.Refused("container name in upper case", tpl(func(_, c map[string]any) { c["name"] = "Python" }), c0+".name", `"Python"`),
		// Fractions in nested integers: not the framework's "always an
		// error in the provider" (package nestedattr).
		pt.Refused("container port 80.5", tpl(func(_, c map[string]any) {
			c["ports"] = []any{map[string]any{"container_port": 80.5}}
		}), c0+".ports[0].container_port", "Not a whole number", "80.5", "80 or 81"),
		pt.Refused("grace period 2.5 s", tpl(func(cfg, c map[string]any) {
			cfg["pod_template"] = map[string]any{"containers": []any{c}, "termination_grace_period_seconds": 2.5}
		}), "pod_template.termination_grace_period_seconds", "Not a whole number", "2 or 3"),
		pt.Refused("end port 8080.5", tpl(rules(egress(map[string]any{"cidr": "10.0.0.0/8", "ports": []any{map[string]any{"port": "443", "end_port": 8080.5}}}))),
			"network_policy.allow_egress[0].ports[0].end_port", "Not a whole number"),
		pt.Refused("cpu 100u", tpl(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "100u", "memory": "1Gi"}}
		}), c0+`.resources.limits["cpu"]`, "finer than 1m", `cpu = "1m"`),
		pt.Refused("cpu request 0.0005", tpl(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "requests": map[string]any{"cpu": "0.0005"}}
		}), c0+`.resources.requests["cpu"]`, "finer than 1m", `cpu = "1m"`),
		pt.Refused("annotation key empty prefix", tpl(func(cfg, _ map[string]any) { cfg["annotations"] = map[string]any{"/owner": "x"} }), `annotations["/owner"]`),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, sandboxtemplate.ResourceType, cases)
	t.Logf("agentsandbox_sandbox_template: %d refused at validate (this table)", len(cases))
}

// TestRepeatedRuleWarns: an allow_egress or ingress entry that repeats an
// earlier one is accepted with a warning at the repeat, naming both
// (issue 37); entries that differ, or may differ once unknown values are
// known, are not called repeats.
func TestRepeatedRuleWarns(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	rule := func(cidr any) map[string]any {
		return map[string]any{"cidr": cidr, "ports": []any{map[string]any{"port": "443"}}}
	}
	src := map[string]any{"pod_selector": map[string]any{"match_labels": map[string]any{"app": "proxy"}}}
	for _, tc := range []struct {
		name  string
		rules map[string]any
		want  []string // paths of the warnings, each "path: repeats"
	}{
		{"egress repeated", map[string]any{"allow_egress": []any{rule("10.0.0.0/8"), rule("192.168.0.0/16"), rule("10.0.0.0/8")}},
			[]string{"network_policy.allow_egress[2]: network_policy.allow_egress[2] is the same as network_policy.allow_egress[0]"}},
		{"ingress repeated", map[string]any{"ingress": []any{src, src}},
			[]string{"network_policy.ingress[1]: network_policy.ingress[1] is the same as network_policy.ingress[0]"}},
		{"all different", map[string]any{"allow_egress": []any{rule("10.0.0.0/8"), rule("10.0.0.0/16")}}, nil},
		{"may differ once known", map[string]any{"allow_egress": []any{rule("10.0.0.0/8"), rule(pt.Unknown)}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := s.ValidateResource(t, sandboxtemplate.ResourceType, tpl(rules(tc.rules)))
			if errs := pt.Errors(diags); len(errs) > 0 {
				t.Fatalf("errors: %s", pt.Describe(errs))
			}
			var got []string
			for _, d := range diags {
				if d.Summary == "Repeated rule" {
					got = append(got, pt.AttributePath(d.Attribute)+": "+d.Detail[:strings.Index(d.Detail, ":")])
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
