package sandboxtemplate_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// These tests drive the provider through the plugin protocol, as Terraform
// does, without a cluster: validation and planning must not need one.

func base(extra map[string]any) map[string]any {
	cfg := map[string]any{
		"name": "python", "namespace": "agents",
		"pod_template": map[string]any{"containers": []any{protocoltest.Container(nil)}},
	}
	maps.Copy(cfg, extra)
	return cfg
}

func egress(cidr string) map[string]any {
	return map[string]any{"network_policy": map[string]any{"allow_egress": []any{map[string]any{"cidr": cidr}}}}
}

func mountOf(name string) map[string]any {
	return map[string]any{"containers": []any{protocoltest.Container(map[string]any{
		"volume_mounts": []any{map[string]any{"name": name, "mount_path": "/" + name}},
	})}}
}

func TestBadInputFailsAtPlanWithItsPath(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	s.ExpectRefused(t, sandboxtemplate.ResourceType, []protocoltest.BadInput{
		protocoltest.Refused("bad name", base(map[string]any{"name": "Python_Template"}), "name", `"Python_Template"`),
		protocoltest.Refused("unknown management", base(map[string]any{"network_policy_management": "Auto"}), "network_policy_management", `"Auto"`),
		protocoltest.Refused("unknown env policy", base(map[string]any{"env_vars_injection_policy": "Sometimes"}), "env_vars_injection_policy", `"Sometimes"`),
		protocoltest.Refused("unknown claim policy", base(map[string]any{"volume_claim_templates_policy": "Always"}), "volume_claim_templates_policy", `"Always"`),
		protocoltest.Refused("CIDR with host bits", base(egress("10.0.0.1/8")), "network_policy.allow_egress[0].cidr", `"10.0.0.1/8"`),
		// The metadata-server rule finds block_metadata_server next to the
		// rules, also when they are nested in network_policy.
		protocoltest.Refused("metadata server while blocked", base(egress("169.254.169.254/32")), "network_policy.allow_egress[0].cidr", "169.254.169.254/32", "block_metadata_server = false"),
		protocoltest.Refused("port 70000", base(map[string]any{"network_policy": map[string]any{"ingress": []any{map[string]any{
			"ports": []any{map[string]any{"port": "70000"}}}}}}), "network_policy.ingress[0].ports[0].port", "70000"),
		protocoltest.Refused("storage 1Gx", base(map[string]any{"volume_claim_templates": []any{map[string]any{
			"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1Gx"}}}}}),
			"volume_claim_templates[0].resources.requests.storage", `"1Gx"`),
		protocoltest.Refused("mount of no volume", base(map[string]any{"pod_template": mountOf("cache")}), "pod_template.containers[0].volume_mounts[0].name", `"cache"`),
		protocoltest.Refused("missing memory limit", base(map[string]any{"pod_template": map[string]any{"containers": []any{protocoltest.Container(map[string]any{
			"resources": map[string]any{"limits": map[string]any{"cpu": "1"}}})}}}), "pod_template.containers[0].resources.limits", "memory"),
		protocoltest.Refused("reserved pod label", base(map[string]any{"pod_template": map[string]any{
			"labels": map[string]any{"agents.x-k8s.io/sandbox-name-hash": "x"}, "containers": []any{protocoltest.Container(nil)},
		}}), `pod_template.labels["agents.x-k8s.io/sandbox-name-hash"]`, "agents.x-k8s.io/"),
	})
}

func warningsAt(diags []*tfprotov6.Diagnostic, path string) int {
	n := 0
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && protocoltest.AttributePath(d.Attribute) == path {
			n++
		}
	}
	return n
}

func TestGoodInputPasses(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	for name, cfg := range map[string]map[string]any{
		"minimal": base(nil),
		// Claims may bring claim templates the pod mounts.
		"mount of a claim's template": base(map[string]any{"volume_claim_templates_policy": "Allowed", "pod_template": mountOf("cache")}),
		"mount of the template's claim": base(map[string]any{"pod_template": mountOf("data"), "volume_claim_templates": []any{map[string]any{
			"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}}),
		"deny all":      base(map[string]any{"network_policy": map[string]any{"ingress": []any{}}}),
		"metadata open": base(map[string]any{"network_policy": map[string]any{"block_metadata_server": false, "allow_egress": []any{map[string]any{"cidr": "169.254.169.254/32"}}}}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := protocoltest.Errors(s.ValidateResource(t, sandboxtemplate.ResourceType, cfg)); len(errs) > 0 {
				t.Error(protocoltest.Describe(errs))
			}
		})
	}

	// Rules the controller would ignore are legal, but the plan says so.
	diags := s.ValidateResource(t, sandboxtemplate.ResourceType, base(map[string]any{
		"network_policy_management": "Unmanaged", "network_policy": map[string]any{"allow_dns": true},
	}))
	if warningsAt(diags, "network_policy") != 1 {
		t.Errorf("want a warning at network_policy: %s", protocoltest.Describe(diags))
	}
}

// TestPlanRendersRulesWithoutACluster: the plan carries the exact rules the
// controller will be given, computed without any request.
func TestPlanRendersRulesWithoutACluster(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	before := kube.RequestCount()
	planned, diags := s.PlanCreate(t, sandboxtemplate.ResourceType, base(map[string]any{
		"network_policy": map[string]any{"allow_dns": true},
	}))
	if errs := protocoltest.Errors(diags); len(errs) > 0 {
		t.Fatal(protocoltest.Describe(errs))
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("planning sent %d requests", n)
	}
	var rendered string
	if err := planned["network_policy_rendered"].As(&rendered); err != nil || rendered == "" {
		t.Fatalf("network_policy_rendered = %v (%v), want it known at plan time", planned["network_policy_rendered"], err)
	}
	var rules struct {
		Ingress []any `json:"ingress"`
		Egress  []any `json:"egress"`
	}
	if err := json.Unmarshal([]byte(rendered), &rules); err != nil {
		t.Fatal(err)
	}
	// The router's ingress by default, and DNS.
	if len(rules.Ingress) != 1 || len(rules.Egress) != 1 {
		t.Errorf("rendered = %s", rendered)
	}

	// Without network_policy: null, the controller's default applies.
	planned, _ = s.PlanCreate(t, sandboxtemplate.ResourceType, base(nil))
	if !planned["network_policy_rendered"].IsNull() {
		t.Errorf("network_policy_rendered = %v, want null", planned["network_policy_rendered"])
	}
}

// TestLooseningWarns: the hardened defaults are the plan's values, and
// loosening one is legal but warned about at its attribute, through this
// resource as through any user of package podtemplate.
func TestLooseningWarns(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	diags := s.ValidateResource(t, sandboxtemplate.ResourceType, base(map[string]any{"pod_template": map[string]any{
		"automount_service_account_token": true,
		"containers":                      []any{protocoltest.Container(nil)},
	}}))
	if errs := protocoltest.Errors(diags); len(errs) > 0 {
		t.Fatal(protocoltest.Describe(errs))
	}
	if warningsAt(diags, "pod_template.automount_service_account_token") != 1 {
		t.Errorf("want a warning at pod_template.automount_service_account_token: %s", protocoltest.Describe(diags))
	}
	if diags := s.ValidateResource(t, sandboxtemplate.ResourceType, base(nil)); len(diags) != 0 {
		t.Errorf("the defaults warn: %s", protocoltest.Describe(diags))
	}
}

// TestSandboxdExposureWarns: a container that runs sandboxd (no
// authentication) warns when the template's own network_policy admits
// anything but the router to its ports; the router alone, loopback,
// ports elsewhere and an Unmanaged policy do not.
func TestSandboxdExposureWarns(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	sandboxd := func(extra map[string]any) map[string]any {
		return map[string]any{"containers": []any{protocoltest.Container(mergeMaps(map[string]any{
			"name": "sandboxd", "image": "us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main",
		}, extra))}}
	}
	namespaceRule := func(ports ...int) map[string]any {
		r := map[string]any{"namespace_selector": map[string]any{"match_labels": map[string]any{"team": "a"}}}
		if len(ports) > 0 {
			var ps []any
			for _, p := range ports {
				ps = append(ps, map[string]any{"port": fmt.Sprint(p)})
			}
			r["ports"] = ps
		}
		return r
	}
	router := map[string]any{"pod_selector": map[string]any{"match_labels": map[string]any{"app": "sandbox-router"}}, "ports": []any{map[string]any{"port": "8080"}}}
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		warn bool
	}{
		{"a namespace on every port", base(map[string]any{"pod_template": sandboxd(nil), "network_policy": map[string]any{"ingress": []any{namespaceRule()}}}), true},
		{"a namespace on the gRPC port", base(map[string]any{"pod_template": sandboxd(nil), "network_policy": map[string]any{"ingress": []any{router, namespaceRule(9090)}}}), true},
		{"moved ports", base(map[string]any{"pod_template": sandboxd(map[string]any{"args": []any{"--rest-port=7000", "--grpc-port=7001"}}),
			"network_policy": map[string]any{"ingress": []any{namespaceRule(7001)}}}), true},
		{"the router only", base(map[string]any{"pod_template": sandboxd(nil), "network_policy": map[string]any{"ingress": []any{router}}}), false},
		{"the default ingress", base(map[string]any{"pod_template": sandboxd(nil), "network_policy": map[string]any{"allow_dns": true}}), false},
		{"a namespace on other ports", base(map[string]any{"pod_template": sandboxd(nil), "network_policy": map[string]any{"ingress": []any{namespaceRule(8888)}}}), false},
		{"loopback", base(map[string]any{"pod_template": sandboxd(map[string]any{"args": []any{"--listen-host=127.0.0.1"}}),
			"network_policy": map[string]any{"ingress": []any{namespaceRule()}}}), false},
		{"not sandboxd", base(map[string]any{"network_policy": map[string]any{"ingress": []any{namespaceRule()}}}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := s.ValidateResource(t, sandboxtemplate.ResourceType, tc.cfg)
			if errs := protocoltest.Errors(diags); len(errs) > 0 {
				t.Fatal(protocoltest.Describe(errs))
			}
			if got := warningsAt(diags, "network_policy.ingress"); (got == 1) != tc.warn || got > 1 {
				t.Errorf("%d warnings at network_policy.ingress, want warn=%v: %s", got, tc.warn, protocoltest.Describe(diags))
			}
		})
	}
}

func mergeMaps(a, b map[string]any) map[string]any {
	maps.Copy(a, b)
	return a
}
