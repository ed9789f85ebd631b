package networkpolicy

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
)

// defaultIngress is the planned value of `ingress` when it is not set.
func defaultIngress(t *testing.T) types.List {
	r, diags := netrules.Flatten(t.Context(), netrules.Intent{Ingress: netrules.DefaultIngress()})
	if diags.HasError() {
		t.Fatal(diags)
	}
	return r.Ingress
}

// The rendering is the security contract of this resource, so these tests
// spell out the JSON a policy must produce rather than re-deriving it.

func mustRender(t *testing.T, p policy) string {
	t.Helper()
	s, err := renderJSON(p.spec())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sameJSON compares two JSON documents structurally and shows both on failure.
func sameJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("rendered policy differs\n got: %s\nwant: %s", got, want)
	}
}

func TestRenderDefaultDeny(t *testing.T) {
	// No ingress entries, no egress allowed: the air-gapped policy. Both
	// lists are present and empty, and both policy types are explicit, so
	// that nothing depends on the server's defaulting.
	got := mustRender(t, policy{PodSelector: &labelSelector{}, Intent: rules{Ingress: []ingressRule{}, BlockMetadataServer: true}})
	sameJSON(t, got, `{
	  "podSelector": {},
	  "policyTypes": ["Ingress", "Egress"],
	  "ingress": [],
	  "egress": []
	}`)
	if !strings.Contains(got, "\n  \"egress\": []") {
		t.Errorf("rendered JSON is not indented canonical JSON:\n%s", got)
	}
}

func TestRenderTemplateSelectorAndDefaultIngress(t *testing.T) {
	m := resourceModel{Rules: netrules.Rules{Ingress: defaultIngress(t)}}
	p, known, diags := m.expand(t.Context())
	if diags.HasError() || !known {
		t.Fatalf("expand: known=%v %v", known, diags)
	}
	p.Template = "python-analytics-template"
	p.BlockMetadataServer = true
	// 178c61b7 is the 32-bit FNV-1a hash of the template name, the value
	// the agent-sandbox controller writes into the label.
	sameJSON(t, mustRender(t, p), `{
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
	}`)
}

func TestRenderDNS(t *testing.T) {
	got := mustRender(t, policy{PodSelector: &labelSelector{}, Intent: rules{Ingress: []ingressRule{}, AllowDNS: true, BlockMetadataServer: true}})
	sameJSON(t, got, `{
	  "podSelector": {},
	  "policyTypes": ["Ingress", "Egress"],
	  "ingress": [],
	  "egress": [{
	    "to": [
	      {
	        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
	        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}
	      },
	      {"ipBlock": {"cidr": "169.254.20.10/32"}}
	    ],
	    "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]
	  }]
	}`)
}

func TestRenderInternetMatchesUpstreamDefault(t *testing.T) {
	// Exactly upstream's managed default egress. The metadata servers are
	// already inside 169.254.0.0/16 and fc00::/7, so the carve-out adds
	// nothing, with or without blocking.
	want := `{
	  "podSelector": {},
	  "policyTypes": ["Ingress", "Egress"],
	  "ingress": [],
	  "egress": [{
	    "to": [
	      {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"]}},
	      {"ipBlock": {"cidr": "::/0", "except": ["fc00::/7", "fe80::/10"]}}
	    ]
	  }]
	}`
	for _, block := range []bool{true, false} {
		sameJSON(t, mustRender(t, policy{PodSelector: &labelSelector{}, Intent: rules{Ingress: []ingressRule{}, AllowInternet: true, BlockMetadataServer: block}}), want)
	}
}

func TestRenderMetadataCarveOut(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cidr       string
		except     []string
		block      bool
		wantExcept []string
	}{
		{"v4 everything", "0.0.0.0/0", nil, true, []string{"169.254.169.254/32"}},
		{"v4 link-local", "169.254.0.0/16", nil, true, []string{"169.254.169.254/32"}},
		{"v4 narrow around it", "169.254.169.0/24", []string{"169.254.169.0/28"}, true, []string{"169.254.169.0/28", "169.254.169.254/32"}},
		{"v4 two addresses", "169.254.169.254/31", nil, true, []string{"169.254.169.254/32"}},
		{"v4 already excepted", "0.0.0.0/0", []string{"169.254.0.0/16"}, true, []string{"169.254.0.0/16"}},
		{"v4 excepted exactly", "0.0.0.0/0", []string{"169.254.169.254/32"}, true, []string{"169.254.169.254/32"}},
		{"v4 elsewhere", "10.0.0.0/8", nil, true, nil},
		{"v4 not blocking", "0.0.0.0/0", nil, false, nil},
		{"v4 the address itself, not blocking", "169.254.169.254/32", nil, false, nil},
		{"v6 everything", "::/0", nil, true, []string{"fd00:ec2::254/128"}},
		{"v6 ULA", "fc00::/7", []string{"fc00::/8"}, true, []string{"fc00::/8", "fd00:ec2::254/128"}},
		{"v6 AWS block", "fd00:ec2::/32", nil, true, []string{"fd00:ec2::254/128"}},
		{"v6 already excepted", "::/0", []string{"fc00::/7"}, true, []string{"fc00::/7"}},
		{"v6 elsewhere", "2001:db8::/32", nil, true, nil},
		{"v6 not blocking", "::/0", nil, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := policy{PodSelector: &labelSelector{}, Intent: rules{
				Ingress: []ingressRule{}, BlockMetadataServer: tc.block,
				AllowEgress: []egressRule{{CIDR: tc.cidr, Except: tc.except, Ports: []port{{Port: "443", Protocol: "TCP"}}}},
			}}
			s := p.spec()
			if len(s.Egress) != 1 || len(s.Egress[0].To) != 1 || s.Egress[0].To[0].IPBlock == nil {
				t.Fatalf("egress = %+v", s.Egress)
			}
			b := s.Egress[0].To[0].IPBlock
			if b.CIDR != tc.cidr || !slices.Equal(b.Except, tc.wantExcept) {
				t.Errorf("ipBlock = %s except %v, want except %v", b.CIDR, b.Except, tc.wantExcept)
			}
			if len(s.Egress[0].Ports) != 1 || s.Egress[0].Ports[0].Port.IntValue() != 443 {
				t.Errorf("ports = %+v", s.Egress[0].Ports)
			}
			// Rendering must not alias the configuration.
			if len(tc.except) > 0 && len(p.AllowEgress[0].Except) != len(tc.except) {
				t.Errorf("render changed the configured except list: %v", p.AllowEgress[0].Except)
			}
		})
	}
}

func TestRenderMetadataCarveOutAppliesToEveryAllowedRange(t *testing.T) {
	// A broad range in any position of the configuration is carved, DNS and
	// internet included (where it is already covered).
	p := policy{PodSelector: &labelSelector{}, Intent: rules{
		Ingress: []ingressRule{}, AllowDNS: true, AllowInternet: true, BlockMetadataServer: true,
		AllowEgress: []egressRule{{CIDR: "10.0.0.0/8"}, {CIDR: "128.0.0.0/1"}, {CIDR: "0.0.0.0/1"}, {CIDR: "::/1"}, {CIDR: "8000::/1"}},
	}}
	reachable := func(ip string) (open []string) {
		for _, r := range p.spec().Egress {
			for _, peer := range r.To {
				if peer.IPBlock != nil && containsAddr(peer.IPBlock.CIDR, ip) && !coveredAddr(peer.IPBlock.Except, ip) {
					open = append(open, peer.IPBlock.CIDR)
				}
			}
		}
		return open
	}
	for _, ip := range []string{"169.254.169.254", "fd00:ec2::254"} {
		if open := reachable(ip); len(open) > 0 {
			t.Errorf("%s is reachable through %v", ip, open)
		}
	}
	for _, ip := range []string{"8.8.8.8", "10.1.2.3", "2001:4860:4860::8888"} {
		if len(reachable(ip)) == 0 {
			t.Errorf("%s should stay reachable", ip)
		}
	}
}

func TestRenderIngressAndPorts(t *testing.T) {
	end := int32(9000)
	p := policy{
		PodSelector: &labelSelector{
			MatchLabels:      map[string]string{"app.kubernetes.io/component": "execution-sandbox"},
			MatchExpressions: []requirement{{Key: "tier", Operator: "In", Values: []string{"a", "b"}}, {Key: "legacy", Operator: "DoesNotExist"}},
		},
		Intent: rules{
			Ingress: []ingressRule{
				{NamespaceSelector: &labelSelector{MatchLabels: map[string]string{"team": "x"}}, Ports: []port{{Port: "http", Protocol: "TCP"}}},
				{PodSelector: &labelSelector{}, Ports: []port{{Port: "8000", EndPort: &end, Protocol: "TCP"}, {Protocol: "UDP"}}},
				{IPBlock: &netrules.IPBlock{CIDR: "203.0.113.0/24", Except: []string{"203.0.113.128/25"}}},
				{Ports: []port{{Port: "9090", Protocol: "SCTP"}}},
			},
			BlockMetadataServer: true,
		},
	}
	sameJSON(t, mustRender(t, p), `{
	  "podSelector": {
	    "matchLabels": {"app.kubernetes.io/component": "execution-sandbox"},
	    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}, {"key": "legacy", "operator": "DoesNotExist"}]
	  },
	  "policyTypes": ["Ingress", "Egress"],
	  "ingress": [
	    {"from": [{"namespaceSelector": {"matchLabels": {"team": "x"}}}], "ports": [{"port": "http", "protocol": "TCP"}]},
	    {"from": [{"podSelector": {}}], "ports": [{"port": 8000, "endPort": 9000, "protocol": "TCP"}, {"protocol": "UDP"}]},
	    {"from": [{"ipBlock": {"cidr": "203.0.113.0/24", "except": ["203.0.113.128/25"]}}]},
	    {"ports": [{"port": 9090, "protocol": "SCTP"}]}
	  ],
	  "egress": []
	}`)
}

func TestLiveSpecMatchesRendered(t *testing.T) {
	// What the API server returns for a default-deny policy: the empty
	// lists are gone, numbers come back as int64. It must render exactly
	// like the configuration, or every plan would show a diff.
	p := policy{Template: "t", Intent: rules{Ingress: []ingressRule{{Ports: []port{{Port: "8888", Protocol: "TCP"}}}}, BlockMetadataServer: true}}
	live := map[string]any{"spec": map[string]any{
		"podSelector": map[string]any{"matchLabels": map[string]any{"agents.x-k8s.io/sandbox-template-ref-hash": templateSelector("t")["agents.x-k8s.io/sandbox-template-ref-hash"]}},
		"policyTypes": []any{"Ingress", "Egress"},
		"ingress":     []any{map[string]any{"ports": []any{map[string]any{"port": int64(8888), "protocol": "TCP"}}}},
	}}
	s, err := liveSpec(live)
	if err != nil {
		t.Fatal(err)
	}
	got, err := renderJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustRender(t, p); got != want {
		t.Errorf("live renders as\n%s\nconfiguration as\n%s", got, want)
	}
	// No spec at all (never written by us) is not an error.
	if _, err := liveSpec(map[string]any{}); err != nil {
		t.Error(err)
	}
}

func containsAddr(cidr, ip string) bool {
	p, err := netip.ParsePrefix(cidr)
	return err == nil && p.Contains(netip.MustParseAddr(ip))
}

func coveredAddr(ranges []string, ip string) bool {
	for _, r := range ranges {
		if containsAddr(r, ip) {
			return true
		}
	}
	return false
}
