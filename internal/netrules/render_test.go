package netrules

import (
	"reflect"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

func TestSpecContentKeepsEmptyRuleLists(t *testing.T) {
	// The explicit empty lists are what lets server-side apply remove rules
	// added out of band (see SpecContent).
	m, err := SpecContent(networkingv1.NetworkPolicySpec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ingress", "egress"} {
		if l, ok := m[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, m[k])
		}
	}
}

func TestTemplateContentIsRulesOnly(t *testing.T) {
	// A template's spec.networkPolicy carries the rules only: the controller
	// adds the pod selector and the policy types.
	in, eg := Intent{Ingress: DefaultIngress(), AllowDNS: true, BlockMetadataServer: true}.Render()
	m, err := Content(in, eg)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["ingress"] == nil || m["egress"] == nil {
		t.Fatalf("content = %#v, want exactly ingress and egress", m)
	}
	gotIn, gotEg, err := Live(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(gotIn, gotEg)
	if err != nil {
		t.Fatal(err)
	}
	want := Intent{Ingress: DefaultIngress(), AllowDNS: true, BlockMetadataServer: true}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("decoded %+v, want %+v", back, want)
	}
}

func TestRulesModelRoundTrip(t *testing.T) {
	// Flatten (import) and Intent (plan) are inverse on a canonical intent.
	end := int32(2000)
	want := Intent{
		Ingress: []IngressRule{
			{NamespaceSelector: &Selector{MatchExpressions: []Requirement{{Key: "k", Operator: "In", Values: []string{"a"}}}}},
			{IPBlock: &IPBlock{CIDR: "192.0.2.0/24", Except: []string{"192.0.2.0/25"}}, Ports: []Port{{Port: "1000", EndPort: &end, Protocol: "UDP"}}},
		},
		AllowInternet: true,
		AllowEgress: []EgressRule{
			{CIDR: "10.0.0.0/8", Ports: []Port{{Protocol: "SCTP"}}},
			{PodSelector: &Selector{MatchLabels: map[string]string{"app": "proxy"}}, Ports: []Port{{Port: "3128", Protocol: "TCP"}}},
			{NamespaceSelector: &Selector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "models"}},
				PodSelector: &Selector{MatchLabels: map[string]string{"app": "llm"}}},
		},
		BlockMetadataServer: true,
	}
	r, diags := Flatten(t.Context(), want)
	if diags.HasError() {
		t.Fatal(diags)
	}
	got, known, diags := r.Intent(t.Context())
	if diags.HasError() || !known {
		t.Fatalf("known=%v %v", known, diags)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", got, want)
	}
}

// TestEgressToSelectorsRendersAndDecodes: an allow_egress entry with
// selectors becomes a peer with those selectors and no ipBlock (the
// metadata carve-out applies to IP ranges only), and Decode reads it back.
func TestEgressToSelectorsRendersAndDecodes(t *testing.T) {
	in := Intent{
		Ingress: []IngressRule{},
		AllowEgress: []EgressRule{
			{PodSelector: &Selector{MatchLabels: map[string]string{"app": "proxy"}}, Ports: []Port{{Port: "3128", Protocol: "TCP"}}},
			{NamespaceSelector: &Selector{MatchLabels: map[string]string{"team": "ml"}}},
		},
		BlockMetadataServer: true,
	}
	_, eg := in.Render()
	if len(eg) != 2 || len(eg[0].To) != 1 || eg[0].To[0].IPBlock != nil || eg[0].To[0].PodSelector == nil ||
		eg[0].To[0].PodSelector.MatchLabels["app"] != "proxy" || eg[0].To[0].NamespaceSelector != nil {
		t.Fatalf("egress = %+v, want a pod-selector peer then a namespace-selector peer", eg)
	}
	if eg[1].To[0].NamespaceSelector == nil || eg[1].To[0].PodSelector != nil || len(eg[1].Ports) != 0 {
		t.Fatalf("egress[1] = %+v", eg[1])
	}
	back, err := Decode(nil, eg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.AllowEgress, in.AllowEgress) || !back.BlockMetadataServer {
		t.Errorf("decoded %+v, want %+v", back, in)
	}
}
