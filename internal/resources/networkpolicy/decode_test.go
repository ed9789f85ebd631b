package networkpolicy

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// Short names for the rule types, which the tables below use a lot.
type (
	rules         = netrules.Intent
	ingressRule   = netrules.IngressRule
	egressRule    = netrules.EgressRule
	labelSelector = netrules.Selector
	requirement   = netrules.Requirement
	port          = netrules.Port
)

// Canonical configurations: what a user writes when leaving defaults
// alone. Import of the policy each one renders must give it back exactly,
// which is what ImportStateVerify relies on.
func canonicalPolicies() map[string]policy {
	end := int32(2000)
	return map[string]policy{
		"template, defaults": {Template: "python", Intent: rules{Ingress: netrules.DefaultIngress(), BlockMetadataServer: true}},
		"air-gapped":         {PodSelector: &labelSelector{}, Intent: rules{Ingress: []ingressRule{}, BlockMetadataServer: true}},
		"dns and internet": {
			PodSelector: &labelSelector{MatchLabels: map[string]string{"app": "x"}}, Intent: rules{Ingress: netrules.DefaultIngress(),
				AllowDNS: true, AllowInternet: true, BlockMetadataServer: true},
		},
		"egress carved": {
			PodSelector: &labelSelector{MatchExpressions: []requirement{{Key: "k", Operator: "Exists"}, {Key: "v", Operator: "NotIn", Values: []string{"a"}}}},
			Intent: rules{
				Ingress: []ingressRule{},
				AllowEgress: []egressRule{
					{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8"}, Ports: []port{{Port: "443", Protocol: "TCP"}}},
					{CIDR: "::/0"},
					{CIDR: "10.1.0.0/16", Ports: []port{{Port: "1000", EndPort: &end, Protocol: "UDP"}, {Protocol: "SCTP"}}},
				},
				BlockMetadataServer: true,
			},
		},
		"metadata allowed on purpose": {
			Template: "python", Intent: rules{Ingress: netrules.DefaultIngress(), AllowInternet: true,
				AllowEgress:         []egressRule{{CIDR: "169.254.169.254/32", Ports: []port{{Port: "80", Protocol: "TCP"}}}},
				BlockMetadataServer: false},
		},
		"every ingress shape": {
			PodSelector: &labelSelector{},
			Intent: rules{
				Ingress: []ingressRule{
					{NamespaceSelector: &labelSelector{}, Ports: []port{{Port: "http", Protocol: "TCP"}}},
					{PodSelector: &labelSelector{MatchLabels: map[string]string{"role": "probe"}}},
					{IPBlock: &netrules.IPBlock{CIDR: "192.0.2.0/24", Except: []string{"192.0.2.0/25"}}},
					{Ports: []port{{Port: "9090", Protocol: "TCP"}}},
				},
				BlockMetadataServer: true,
			},
		},
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	templates := func(hash string) string {
		if hash == sandboxapi.NameHash("python") {
			return "python"
		}
		return ""
	}
	for name, want := range canonicalPolicies() {
		t.Run(name, func(t *testing.T) {
			got, err := decode(want.spec(), templates)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decode(render(p)) =\n%+v\nwant\n%+v", got, want)
			}
			// And through the framework model, as import stores it.
			var m resourceModel
			if diags := m.setInputs(t.Context(), got); diags.HasError() {
				t.Fatal(diags)
			}
			back, known, diags := m.expand(t.Context())
			if diags.HasError() || !known {
				t.Fatalf("expand: known=%v %v", known, diags)
			}
			if !reflect.DeepEqual(back, want) {
				t.Errorf("model round trip =\n%+v\nwant\n%+v", back, want)
			}
		})
	}
}

func TestDecodeTemplateUnknownToTheCluster(t *testing.T) {
	// The label holds only a hash: with no SandboxTemplate of that name to
	// be found, the selector is imported as it is, and renders the same.
	p := policy{Template: "gone", Intent: rules{Ingress: netrules.DefaultIngress(), BlockMetadataServer: true}}
	got, err := decode(p.spec(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got.Template != "" || got.PodSelector == nil || got.PodSelector.MatchLabels[agentsv1beta1.SandboxTemplateRefHashLabel] != sandboxapi.NameHash("gone") {
		t.Fatalf("got %+v", got)
	}
	if !reflect.DeepEqual(got.spec(), p.spec()) {
		t.Error("the imported selector renders a different policy")
	}
}

func TestDecodeForeignPolicies(t *testing.T) {
	tcp := corev1.ProtocolTCP
	p8888 := intstr.FromInt32(8888)
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}

	t.Run("walkthrough policy, two peers in one rule", func(t *testing.T) {
		// isolate-untrusted-sandboxes from the GKE walkthrough, as kubectl
		// would have stored it: one rule with two peers (either admits).
		s := networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/component": "execution-sandbox"}},
			PolicyTypes: both,
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "agent-sandbox-system"}}},
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/component": "sandbox-router"}}},
				},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &p8888}},
			}},
		}
		got, err := decode(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Ingress) != 2 || got.Ingress[0].NamespaceSelector == nil || got.Ingress[0].PodSelector != nil ||
			got.Ingress[1].PodSelector == nil || got.Ingress[1].NamespaceSelector != nil || got.Ingress[1].Ports[0].Port != "8888" {
			t.Errorf("ingress = %+v", got.Ingress)
		}
		if got.AllowDNS || got.AllowInternet || got.AllowEgress != nil || !got.BlockMetadataServer {
			t.Errorf("egress = %+v", got)
		}
	})

	t.Run("upstream managed default", func(t *testing.T) {
		// What the controller writes for a Managed template: no ports on
		// the router rule, and the internet rule.
		s := networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: templateSelector("python")},
			PolicyTypes: both,
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "agent-sandbox-system"}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sandbox-router"}},
			}}}},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}},
				{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fc00::/7", "fe80::/10"}}},
			}}},
		}
		got, err := decode(s, func(string) string { return "python" })
		if err != nil {
			t.Fatal(err)
		}
		if got.Template != "python" || !got.AllowInternet || got.AllowEgress != nil || len(got.Ingress) != 1 || got.Ingress[0].Ports != nil {
			t.Errorf("got %+v", got)
		}
		if !reflect.DeepEqual(got.spec(), s) {
			t.Errorf("renders differently:\n%+v\n%+v", got.spec(), s)
		}
	})

	t.Run("metadata reachable through a broad range", func(t *testing.T) {
		s := networkingv1.NetworkPolicySpec{PolicyTypes: both, Egress: []networkingv1.NetworkPolicyEgressRule{
			{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}}},
		}}
		got, err := decode(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.BlockMetadataServer {
			t.Error("a policy that lets sandboxes reach 169.254.169.254 must import with block_metadata_server = false, " +
				"or the next apply would change it without the plan saying why")
		}
	})

	t.Run("egress to pods and namespaces", func(t *testing.T) {
		// A rule with two selector peers imports as one allow_egress entry
		// per peer, which allows exactly the same traffic.
		s := networkingv1.NetworkPolicySpec{PolicyTypes: both, Egress: []networkingv1.NetworkPolicyEgressRule{
			{To: []networkingv1.NetworkPolicyPeer{
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "proxy"}}},
				{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "ml"}}},
			}, Ports: []networkingv1.NetworkPolicyPort{{Port: new(intstr.FromInt32(3128))}}},
		}}
		got, err := decode(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.AllowEgress) != 2 || got.AllowEgress[0].CIDR != "" || got.AllowEgress[0].PodSelector == nil ||
			got.AllowEgress[1].NamespaceSelector == nil || len(got.AllowEgress[1].Ports) != 1 {
			t.Errorf("allow_egress = %+v, want a pod-selector entry and a namespace-selector entry, each on port 3128", got.AllowEgress)
		}
	})

	for _, tc := range []struct {
		name string
		spec networkingv1.NetworkPolicySpec
		want string
	}{
		{"ingress only", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}, "does not isolate both directions"},
		{"egress anywhere", networkingv1.NetworkPolicySpec{PolicyTypes: both, Egress: []networkingv1.NetworkPolicyEgressRule{{}}}, "egress[0] allows every destination"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(tc.spec, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
