package networkpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// These tests drive the provider through the plugin protocol, as Terraform
// does, without a cluster: validation and planning must not need one.

// unknown marks a value as not known yet in a config built by tfValue.
type unknownValue struct{}

var unknown = unknownValue{}

// tfValue builds a Terraform value of type t from Go values: objects from
// map[string]any (missing attributes are null), lists from []any, maps
// from map[string]string, numbers from int, and unknown for "known after
// apply".
func tfValue(t tftypes.Type, v any) tftypes.Value {
	if v == nil {
		return tftypes.NewValue(t, nil)
	}
	if _, ok := v.(unknownValue); ok {
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	switch tt := t.(type) {
	case tftypes.Object:
		in := v.(map[string]any)
		for k := range in {
			if _, ok := tt.AttributeTypes[k]; !ok {
				panic(fmt.Sprintf("no attribute %q in %s", k, tt))
			}
		}
		vals := map[string]tftypes.Value{}
		for name, at := range tt.AttributeTypes {
			vals[name] = tfValue(at, in[name])
		}
		return tftypes.NewValue(t, vals)
	case tftypes.List:
		var vals []tftypes.Value
		for _, e := range v.([]any) {
			vals = append(vals, tfValue(tt.ElementType, e))
		}
		return tftypes.NewValue(t, vals)
	case tftypes.Map:
		vals := map[string]tftypes.Value{}
		for k, e := range v.(map[string]string) {
			vals[k] = tfValue(tt.ElementType, e)
		}
		return tftypes.NewValue(t, vals)
	}
	switch x := v.(type) {
	case int:
		return tftypes.NewValue(t, big.NewFloat(float64(x)))
	default:
		return tftypes.NewValue(t, x)
	}
}

type server struct {
	srv tfprotov6.ProviderServer
	typ tftypes.Type
}

func newServer(t *testing.T) server {
	t.Helper()
	ctx := context.Background()
	srv := providerserver.NewProtocol6(provider.New("test")())()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := schemas.ResourceSchemas[networkpolicy.ResourceType]
	if !ok {
		t.Fatalf("%s is not registered in the provider", networkpolicy.ResourceType)
	}
	return server{srv: srv, typ: s.ValueType()}
}

func (s server) dynamic(t *testing.T, cfg map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(s.typ, tfValue(s.typ, cfg))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// validate returns the diagnostics of ValidateResourceConfig.
func (s server) validate(t *testing.T, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := s.srv.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName: networkpolicy.ResourceType, Config: s.dynamic(t, cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// attributePath renders a protocol attribute path the way people write it:
// allow_egress[0].ports[1].port, labels["team"].
func attributePath(p *tftypes.AttributePath) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		}
	}
	return b.String()
}

func errorsOf(diags []*tfprotov6.Diagnostic) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			out = append(out, d)
		}
	}
	return out
}

// base is a valid configuration that each bad-input case breaks in one place.
func base(extra map[string]any) map[string]any {
	cfg := map[string]any{"name": "isolate", "namespace": "agents", "template": "python"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func egress(cidr string, extra map[string]any) map[string]any {
	e := map[string]any{"cidr": cidr}
	for k, v := range extra {
		e[k] = v
	}
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
	s := newServer(t)
	for _, tc := range []struct {
		name     string
		cfg      map[string]any
		wantPath string
		inDetail string
	}{
		{"bad CIDR: host bits", base(egress("10.0.0.1/8", nil)), "allow_egress[0].cidr", `"10.0.0.0/8"`},
		{"bad CIDR: not one", base(egress("10.0.0.0", nil)), "allow_egress[0].cidr", "not a CIDR"},
		{"bad CIDR: IPv6 spelling", base(egress("FD00::/8", nil)), "allow_egress[0].cidr", `"fd00::/8"`},
		{"bad CIDR in except", base(egress("10.0.0.0/8", map[string]any{"except": []any{"10.1.0.0/16", "10.2.0.0.0/16"}})), "allow_egress[0].except[1]", "not a CIDR"},
		{"except outside cidr", base(egress("10.0.0.0/8", map[string]any{"except": []any{"192.168.0.0/16"}})), "allow_egress[0].except[0]", "not strictly inside 10.0.0.0/8"},
		{"except equal to cidr", base(egress("10.0.0.0/8", map[string]any{"except": []any{"10.0.0.0/8"}})), "allow_egress[0].except[0]", "strictly inside"},
		{"except of the other family", base(egress("0.0.0.0/0", map[string]any{"except": []any{"fc00::/7"}})), "allow_egress[0].except[0]", "strictly inside"},
		{"ingress ip_block except outside", base(map[string]any{"ingress": []any{map[string]any{"ip_block": map[string]any{"cidr": "192.0.2.0/24", "except": []any{"198.51.100.0/24"}}}}}), "ingress[0].ip_block.except[0]", "strictly inside"},
		{"port 0", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "0"})})), "allow_egress[0].ports[0].port", "1 to 65535"},
		{"port 70000", base(map[string]any{"ingress": []any{map[string]any{"ports": ports(map[string]any{"port": "70000"})}}}), "ingress[0].ports[0].port", "1 to 65535"},
		{"port with leading zero", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "0443"})})), "allow_egress[0].ports[0].port", "write 443"},
		{"bad port name", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "Web_UI"})})), "allow_egress[0].ports[0].port", "port name"},
		{"end_port 70000", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "1", "end_port": 70000})})), "allow_egress[0].ports[0].end_port", "65535"},
		{"end_port before port", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "2000", "end_port": 1000})})), "allow_egress[0].ports[0].end_port", "lower than port 2000"},
		{"end_port with a named port", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "http", "end_port": 1000})})), "allow_egress[0].ports[0].end_port", "numeric start"},
		{"end_port without port", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"end_port": 1000})})), "allow_egress[0].ports[0].end_port", "set port"},
		{"bad protocol", base(egress("10.0.0.0/8", map[string]any{"ports": ports(map[string]any{"port": "53", "protocol": "ICMP"})})), "allow_egress[0].ports[0].protocol", "TCP, UDP, SCTP"},
		{"lower-case protocol", base(map[string]any{"ingress": []any{map[string]any{"ports": ports(map[string]any{"protocol": "udp"})}}}), "ingress[0].ports[0].protocol", `write "UDP"`},
		{"metadata allowed while blocked (v4)", base(egress("169.254.169.254/32", nil)), "allow_egress[0].cidr", "block_metadata_server = false"},
		{"metadata allowed while blocked (v6)", base(egress("fd00:ec2::254/128", nil)), "allow_egress[0].cidr", "cloud metadata server"},
		{"metadata allowed while explicitly blocked", base(map[string]any{"block_metadata_server": true, "allow_egress": []any{map[string]any{"cidr": "169.254.169.254/32"}}}), "allow_egress[0].cidr", "cloud metadata server"},
		{"template and pod_selector", base(map[string]any{"pod_selector": map[string]any{}}), "template", "pod_selector"},
		{"bad template name", base(map[string]any{"template": "Python_3"}), "template", "RFC 1123"},
		{"bad label key", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_labels": map[string]string{"bad key": "x"}}}), `pod_selector.match_labels["bad key"]`, "label key"},
		{"bad label value", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_labels": map[string]string{"app": "no spaces"}}}), `pod_selector.match_labels["app"]`, "label value"},
		{"bad expression operator", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "app", "operator": "Equals", "values": []any{"x"}}}}}), "pod_selector.match_expressions[0].operator", "In"},
		{"In without values", base(map[string]any{"template": nil, "pod_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "app", "operator": "In"}}}}), "pod_selector.match_expressions[0].values", "at least one"},
		{"Exists with values", base(map[string]any{"ingress": []any{map[string]any{"namespace_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "team", "operator": "Exists", "values": []any{"a"}}}}}}}), "ingress[0].namespace_selector.match_expressions[0].values", "remove values"},
		{"bad selector value in expression", base(map[string]any{"ingress": []any{map[string]any{"pod_selector": map[string]any{"match_expressions": []any{map[string]any{"key": "team", "operator": "In", "values": []any{"a b"}}}}}}}), "ingress[0].pod_selector.match_expressions[0].values[0]", "label value"},
		{"ip_block with a selector", base(map[string]any{"ingress": []any{map[string]any{"pod_selector": map[string]any{}, "ip_block": map[string]any{"cidr": "192.0.2.0/24"}}}}), "ingress[0].ip_block", "pod_selector"},
		{"bad policy label", base(map[string]any{"labels": map[string]string{"agents.x-k8s.io/owner": "me"}}), `labels["agents.x-k8s.io/owner"]`, "Reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := errorsOf(s.validate(t, tc.cfg))
			if len(errs) == 0 {
				t.Fatalf("no error; want one at %s", tc.wantPath)
			}
			for _, d := range errs {
				if attributePath(d.Attribute) == tc.wantPath && strings.Contains(d.Summary+" "+d.Detail, tc.inDetail) {
					return
				}
			}
			var got []string
			for _, d := range errs {
				got = append(got, fmt.Sprintf("%s: %s: %s", attributePath(d.Attribute), d.Summary, d.Detail))
			}
			t.Fatalf("want an error at %s mentioning %q; got:\n  %s", tc.wantPath, tc.inDetail, strings.Join(got, "\n  "))
		})
	}
}

func TestNeitherSelectorFailsAtPlan(t *testing.T) {
	errs := errorsOf(newServer(t).validate(t, map[string]any{"name": "isolate"}))
	if len(errs) == 0 || !strings.Contains(errs[0].Detail, "template") || !strings.Contains(errs[0].Detail, "pod_selector") {
		t.Fatalf("errors = %v", errs)
	}
}

func TestGoodInputPasses(t *testing.T) {
	s := newServer(t)
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
		"unknowns": base(map[string]any{"block_metadata_server": unknown, "allow_egress": []any{
			map[string]any{"cidr": "169.254.169.254/32", "except": unknown, "ports": ports(map[string]any{"port": unknown, "end_port": 5})},
			map[string]any{"cidr": unknown, "except": []any{"10.0.0.0/8"}},
		}}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := errorsOf(s.validate(t, cfg)); len(errs) > 0 {
				for _, d := range errs {
					t.Errorf("%s: %s: %s", attributePath(d.Attribute), d.Summary, d.Detail)
				}
			}
		})
	}
}

// TestPlanRendersWithoutACluster plans a new policy through the protocol:
// `rendered` is known at plan time and no request is sent anywhere.
func TestPlanRendersWithoutACluster(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	cfg := s.dynamic(t, base(map[string]any{"allow_dns": true}))
	prior, err := tfprotov6.NewDynamicValue(s.typ, tftypes.NewValue(s.typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	before := kube.RequestCount()
	resp, err := s.srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: networkpolicy.ResourceType, PriorState: &prior, ProposedNewState: cfg, Config: cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s: %s", attributePath(d.Attribute), d.Summary, d.Detail)
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("planning sent %d requests", n)
	}
	planned, err := resp.PlannedState.Unmarshal(s.typ)
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := planned.As(&attrs); err != nil {
		t.Fatal(err)
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
	cfg = s.dynamic(t, base(map[string]any{"template": unknown}))
	resp, err = s.srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: networkpolicy.ResourceType, PriorState: &prior, ProposedNewState: cfg, Config: cfg,
	})
	if err != nil || len(errorsOf(resp.Diagnostics)) > 0 {
		t.Fatal(err, resp.Diagnostics)
	}
	planned, _ = resp.PlannedState.Unmarshal(s.typ)
	_ = planned.As(&attrs)
	if attrs["rendered"].IsKnown() {
		t.Errorf("rendered = %v, want unknown", attrs["rendered"])
	}
}

// TestPlanWarnsAboutTheControllersPolicyName: naming the policy like the
// one the controller manages for the same template is legal but fights
// with the controller, so the plan says so.
func TestPlanWarnsAboutTheControllersPolicyName(t *testing.T) {
	s := newServer(t)
	cfg := s.dynamic(t, base(map[string]any{"name": "python-network-policy"}))
	prior, err := tfprotov6.NewDynamicValue(s.typ, tftypes.NewValue(s.typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: networkpolicy.ResourceType, PriorState: &prior, ProposedNewState: cfg, Config: cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && attributePath(d.Attribute) == "name" && strings.Contains(d.Detail, "Unmanaged") {
			return
		}
	}
	t.Fatalf("no warning at name: %v", resp.Diagnostics)
}
