package netpolicy

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const ns = "agents"

func policy(name string, sel map[string]string, types []networkingv1.PolicyType, in []networkingv1.NetworkPolicyIngressRule, out []networkingv1.NetworkPolicyEgressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: sel},
			PolicyTypes: types,
			Ingress:     in,
			Egress:      out,
		},
	}
}

var (
	both        = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	egressOnly  = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	ingressOnly = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	sandboxSel  = map[string]string{"role": "sandbox"}
)

func sandbox() Pod {
	return Pod{
		Namespace: ns, NamespaceLabels: map[string]string{"kubernetes.io/metadata.name": ns},
		Labels: map[string]string{"role": "sandbox", "app": "py"}, IP: netip.MustParseAddr("10.0.0.5"),
		Ports: []corev1.ContainerPort{{Name: "agent", ContainerPort: 8888}, {Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP}},
	}
}

func podIn(namespace string, nsLabels, lbls map[string]string) Pod {
	l := map[string]string{"kubernetes.io/metadata.name": namespace}
	for k, v := range nsLabels {
		l[k] = v
	}
	return Pod{Namespace: namespace, NamespaceLabels: l, Labels: lbls, IP: netip.MustParseAddr("10.0.1.7")}
}

func ip(s string) Endpoint { return Addr(netip.MustParseAddr(s)) }

func tcp(n int32) Port { return Port{Number: n, Protocol: corev1.ProtocolTCP} }

func toBlock(cidr string, except ...string) []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}}
}

func ports(ps ...networkingv1.NetworkPolicyPort) []networkingv1.NetworkPolicyPort { return ps }

func port(n int, proto corev1.Protocol) networkingv1.NetworkPolicyPort {
	p := networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(int32(n)))}
	if proto != "" {
		p.Protocol = &proto
	}
	return p
}

func TestEgress(t *testing.T) {
	denyAll := policy("deny", sandboxSel, both, nil, nil)
	metadataOpen := policy("wide", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{{To: toBlock("0.0.0.0/0")}})
	linkLocal := policy("linklocal", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{{To: toBlock("169.254.0.0/16")}})
	internet := policy("internet", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{
		{To: toBlock("0.0.0.0/0", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16")},
		{To: toBlock("::/0", "fc00::/7", "fe80::/10")},
	})
	allowList := policy("list", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{
		{To: toBlock("198.19.0.0/28", "198.19.0.12/32"), Ports: ports(port(80, ""))},
	})
	rangePorts := policy("range", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{
		{Ports: ports(networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(8000)), EndPort: ptr.To[int32](8100)})},
	})
	udpOnly := policy("udp", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{{Ports: ports(port(53, corev1.ProtocolUDP))}})
	allProtoOfUDP := policy("udpall", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{{Ports: ports(networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolUDP)})}})
	// policyTypes empty and egress rules present: the API default is
	// Ingress+Egress; empty without egress rules: Ingress only.
	defaultedEgress := policy("defaulted", sandboxSel, nil, nil, []networkingv1.NetworkPolicyEgressRule{{To: toBlock("1.1.1.1/32")}})
	defaultedIngress := policy("ingress-default", sandboxSel, nil, nil, nil)
	otherNS := policy("elsewhere", nil, both, nil, nil)
	otherNS.Namespace = "other"
	otherPods := policy("others", map[string]string{"role": "db"}, both, nil, nil)
	v6 := policy("v6", sandboxSel, egressOnly, nil, []networkingv1.NetworkPolicyEgressRule{{To: toBlock("fd00::/8", "fd00:ec2::254/128")}})

	for _, tc := range []struct {
		name      string
		policies  []networkingv1.NetworkPolicy
		dst       Endpoint
		port      Port
		allowed   bool
		isolated  bool
		allowedBy []string
	}{
		{"no policy: allowed, not isolated", nil, ip("169.254.169.254"), tcp(80), true, false, nil},
		{"policy of another namespace does not select", []networkingv1.NetworkPolicy{otherNS}, ip("8.8.8.8"), tcp(443), true, false, nil},
		{"policy selecting other pods does not select", []networkingv1.NetworkPolicy{otherPods}, ip("8.8.8.8"), tcp(443), true, false, nil},
		{"ingress-only policy does not isolate egress", []networkingv1.NetworkPolicy{policy("in", sandboxSel, ingressOnly, nil, nil)}, ip("8.8.8.8"), tcp(443), true, false, nil},
		{"empty policyTypes without egress rules: ingress only", []networkingv1.NetworkPolicy{defaultedIngress}, ip("8.8.8.8"), tcp(443), true, false, nil},
		{"empty policyTypes with egress rules: egress isolated", []networkingv1.NetworkPolicy{defaultedEgress}, ip("8.8.8.8"), tcp(443), false, true, nil},
		{"empty policyTypes with egress rules: the rule allows", []networkingv1.NetworkPolicy{defaultedEgress}, ip("1.1.1.1"), tcp(443), true, true, []string{"defaulted"}},
		{"default deny", []networkingv1.NetworkPolicy{denyAll}, ip("8.8.8.8"), tcp(443), false, true, nil},
		{"0.0.0.0/0 reaches the metadata server", []networkingv1.NetworkPolicy{metadataOpen}, ip("169.254.169.254"), tcp(80), true, true, []string{"wide"}},
		{"169.254.0.0/16 reaches the metadata server", []networkingv1.NetworkPolicy{linkLocal}, ip("169.254.169.254"), tcp(80), true, true, []string{"linklocal"}},
		{"union: deny-all plus a wide policy allows", []networkingv1.NetworkPolicy{denyAll, metadataOpen}, ip("169.254.169.254"), tcp(80), true, true, []string{"wide"}},
		{"internet: public address", []networkingv1.NetworkPolicy{internet}, ip("203.0.113.10"), tcp(8080), true, true, []string{"internet"}},
		{"internet: except 169.254/16", []networkingv1.NetworkPolicy{internet}, ip("169.254.169.254"), tcp(80), false, true, nil},
		{"internet: except 10/8", []networkingv1.NetworkPolicy{internet}, ip("10.10.0.10"), tcp(80), false, true, nil},
		{"internet: IPv6 public", []networkingv1.NetworkPolicy{internet}, ip("2001:4860:4860::8888"), tcp(443), true, true, []string{"internet"}},
		{"internet: IPv6 metadata fd00:ec2::254 is unique-local, excepted", []networkingv1.NetworkPolicy{internet}, ip("fd00:ec2::254"), tcp(80), false, true, nil},
		{"IPv4 block does not match IPv6", []networkingv1.NetworkPolicy{metadataOpen}, ip("fd00:ec2::254"), tcp(80), false, true, nil},
		{"IPv6 block with except", []networkingv1.NetworkPolicy{v6}, ip("fd00:ec2::254"), tcp(80), false, true, nil},
		{"IPv6 block contains", []networkingv1.NetworkPolicy{v6}, ip("fd00:ec2::1"), tcp(80), true, true, []string{"v6"}},
		{"allow-list: in range on the port", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.10"), tcp(80), true, true, []string{"list"}},
		{"allow-list: other port", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.10"), tcp(8080), false, true, nil},
		{"allow-list: UDP on a TCP port entry", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.10"), Port{80, corev1.ProtocolUDP}, false, true, nil},
		{"allow-list: except", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.12"), tcp(80), false, true, nil},
		{"allow-list: outside", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.20"), tcp(80), false, true, nil},
		{"allow-list: some port of TCP", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.10"), Port{0, corev1.ProtocolTCP}, true, true, []string{"list"}},
		{"port range: low end", []networkingv1.NetworkPolicy{rangePorts}, ip("8.8.8.8"), tcp(8000), true, true, []string{"range"}},
		{"port range: high end", []networkingv1.NetworkPolicy{rangePorts}, ip("8.8.8.8"), tcp(8100), true, true, []string{"range"}},
		{"port range: beyond", []networkingv1.NetworkPolicy{rangePorts}, ip("8.8.8.8"), tcp(8101), false, true, nil},
		{"UDP 53 entry: UDP allowed", []networkingv1.NetworkPolicy{udpOnly}, ip("169.254.20.10"), Port{53, corev1.ProtocolUDP}, true, true, []string{"udp"}},
		{"UDP 53 entry: TCP 53 not", []networkingv1.NetworkPolicy{udpOnly}, ip("169.254.20.10"), tcp(53), false, true, nil},
		{"every UDP port", []networkingv1.NetworkPolicy{allProtoOfUDP}, ip("1.2.3.4"), Port{9999, corev1.ProtocolUDP}, true, true, []string{"udpall"}},
		{"empty protocol means TCP", []networkingv1.NetworkPolicy{allowList}, ip("198.19.0.10"), Port{Number: 80}, true, true, []string{"list"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := EgressFrom(tc.policies, sandbox(), tc.dst, tc.port)
			if v.Allowed != tc.allowed || v.Isolated != tc.isolated || !slices.Equal(v.AllowedBy, tc.allowedBy) {
				t.Errorf("got allowed=%v isolated=%v by %v (%s), want allowed=%v isolated=%v by %v", v.Allowed, v.Isolated, v.AllowedBy, v, tc.allowed, tc.isolated, tc.allowedBy)
			}
		})
	}
}

func TestIngressPeers(t *testing.T) {
	router := podIn("agent-sandbox-system", nil, map[string]string{"app": "sandbox-router"})
	stranger := podIn("agent-sandbox-system", nil, map[string]string{"app": "other"})
	impostor := podIn(ns, nil, map[string]string{"app": "sandbox-router"})
	neighbour := podIn(ns, nil, map[string]string{"app": "py"})
	team := podIn("team-a", map[string]string{"team": "a"}, map[string]string{"app": "client"})

	routerRule := policy("router", sandboxSel, both, []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "agent-sandbox-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sandbox-router"}},
		}},
		Ports: ports(port(8888, "")),
	}}, nil)
	// Two peers: the namespace selector alone OR the pod selector alone.
	either := policy("either", sandboxSel, ingressOnly, []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
			{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "py"}}},
		},
	}}, nil)
	named := policy("named", sandboxSel, ingressOnly, []networkingv1.NetworkPolicyIngressRule{{
		Ports: ports(networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromString("agent"))}),
	}}, nil)
	allNamespaces := policy("all-ns", sandboxSel, ingressOnly, []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
	}}, nil)
	ipIngress := policy("from-ip", sandboxSel, ingressOnly, []networkingv1.NetworkPolicyIngressRule{{From: toBlock("10.0.1.0/24")}}, nil)

	for _, tc := range []struct {
		name     string
		policies []networkingv1.NetworkPolicy
		src      Endpoint
		port     Port
		allowed  bool
	}{
		{"router on 8888", []networkingv1.NetworkPolicy{routerRule}, PodEndpoint(router), tcp(8888), true},
		{"router on another port", []networkingv1.NetworkPolicy{routerRule}, PodEndpoint(router), tcp(9999), false},
		{"stranger in the router namespace", []networkingv1.NetworkPolicy{routerRule}, PodEndpoint(stranger), tcp(8888), false},
		{"router label in the wrong namespace", []networkingv1.NetworkPolicy{routerRule}, PodEndpoint(impostor), tcp(8888), false},
		{"an address is not a pod", []networkingv1.NetworkPolicy{routerRule}, ip("10.0.1.7"), tcp(8888), false},
		{"either: namespace selector alone", []networkingv1.NetworkPolicy{either}, PodEndpoint(team), tcp(1), true},
		{"either: pod selector alone means this namespace", []networkingv1.NetworkPolicy{either}, PodEndpoint(neighbour), tcp(1), true},
		{"either: pod selector does not reach other namespaces", []networkingv1.NetworkPolicy{either}, PodEndpoint(podIn("team-b", nil, map[string]string{"app": "py"})), tcp(1), false},
		{"named port: by name on the destination pod", []networkingv1.NetworkPolicy{named}, PodEndpoint(team), tcp(8888), true},
		{"named port: other number", []networkingv1.NetworkPolicy{named}, PodEndpoint(team), tcp(8080), false},
		{"named port: some port", []networkingv1.NetworkPolicy{named}, PodEndpoint(team), Port{0, corev1.ProtocolTCP}, true},
		{"named port: wrong protocol", []networkingv1.NetworkPolicy{named}, PodEndpoint(team), Port{8888, corev1.ProtocolUDP}, false},
		{"empty namespace selector: every namespace", []networkingv1.NetworkPolicy{allNamespaces}, PodEndpoint(team), tcp(22), true},
		{"empty namespace selector: not an address", []networkingv1.NetworkPolicy{allNamespaces}, ip("8.8.8.8"), tcp(22), false},
		{"ipBlock matches a pod's address", []networkingv1.NetworkPolicy{ipIngress}, PodEndpoint(team), tcp(22), true},
		{"ipBlock: address outside", []networkingv1.NetworkPolicy{ipIngress}, ip("10.0.2.1"), tcp(22), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v := IngressTo(tc.policies, sandbox(), tc.src, tc.port); v.Allowed != tc.allowed {
				t.Errorf("got %s, want allowed=%v", v, tc.allowed)
			}
		})
	}
}

// TestAnyLabels: a pod with unknown labels matches a selector when some
// labels could satisfy it.
func TestAnyLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  metav1.LabelSelector
		want bool
	}{
		{"empty", metav1.LabelSelector{}, true},
		{"match labels", metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, true},
		{"In", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"x"}}}}, true},
		{"NotIn", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}}, true},
		{"Exists and DoesNotExist contradict", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "a", Operator: metav1.LabelSelectorOpExists},
			{Key: "a", Operator: metav1.LabelSelectorOpDoesNotExist},
		}}, false},
		{"label and NotIn of its value contradict", metav1.LabelSelector{
			MatchLabels:      map[string]string{"a": "x"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}},
		}, false},
		{"In and NotIn leave a value", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "y"}},
			{Key: "a", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}},
		}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := selectorMatches(&tc.sel, nil, true); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConnect: a pod-to-pod connection needs the source's egress and the
// destination's ingress.
func TestConnect(t *testing.T) {
	peer := sandbox()
	peer.IP = netip.MustParseAddr("10.0.0.6")
	sameTemplate := policy("siblings", sandboxSel, both,
		[]networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: sandboxSel}}}}},
		nil)
	egressToSiblings := policy("egress-siblings", sandboxSel, egressOnly, nil,
		[]networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: sandboxSel}}}}})
	e, i := Connect([]networkingv1.NetworkPolicy{sameTemplate}, PodEndpoint(sandbox()), PodEndpoint(peer), tcp(8888))
	if e.Allowed || !i.Allowed {
		t.Errorf("ingress allowed but egress denied: got egress %s, ingress %s", e, i)
	}
	e, i = Connect([]networkingv1.NetworkPolicy{sameTemplate, egressToSiblings}, PodEndpoint(sandbox()), PodEndpoint(peer), tcp(8888))
	if !e.Allowed || !i.Allowed {
		t.Errorf("both sides allow: got egress %s, ingress %s", e, i)
	}
	e, i = Connect(nil, ip("8.8.8.8"), PodEndpoint(peer), tcp(8888))
	if !e.Allowed || !i.Allowed || e.Isolated || i.Isolated {
		t.Errorf("no policies: got egress %s, ingress %s", e, i)
	}
}

func TestInBlock(t *testing.T) {
	for _, tc := range []struct {
		cidr   string
		except []string
		ip     string
		want   bool
	}{
		{"0.0.0.0/0", nil, "169.254.169.254", true},
		{"0.0.0.0/0", []string{"169.254.169.254/32"}, "169.254.169.254", false},
		{"0.0.0.0/0", []string{"169.254.169.254/32"}, "169.254.169.253", true},
		{"::/0", nil, "169.254.169.254", false},
		{"0.0.0.0/0", nil, "::ffff:169.254.169.254", true},
		{"not-a-cidr", nil, "1.2.3.4", false},
		{"1.2.3.0/24", []string{"junk"}, "1.2.3.4", true},
	} {
		if got := InBlock(networkingv1.IPBlock{CIDR: tc.cidr, Except: tc.except}, netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("InBlock(%s except %v, %s) = %v, want %v", tc.cidr, tc.except, tc.ip, got, tc.want)
		}
	}
}
