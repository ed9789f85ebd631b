package networkpolicy

import (
	"encoding/json"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// policy is what a configuration asks for, every value known: the
// resource's attributes without Terraform's null/unknown wrappers. render
// turns it into a NetworkPolicy spec and decode turns a spec back into it.
//
// Slices keep the difference between nil (attribute not set) and empty
// (set to []) so that an imported policy has the attribute values the
// canonical configuration would have.
type policy struct {
	Template            string         // "" when PodSelector is used
	PodSelector         *labelSelector // nil when Template is used
	Ingress             []ingressRule
	AllowDNS            bool
	AllowInternet       bool
	AllowEgress         []egressRule
	BlockMetadataServer bool
}

type labelSelector struct {
	MatchLabels      map[string]string
	MatchExpressions []selectorRequirement
}

type selectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// ingressRule admits traffic from one kind of peer (pods and/or
// namespaces, or an IP range; none means every source) on Ports (none
// means every port).
type ingressRule struct {
	NamespaceSelector *labelSelector
	PodSelector       *labelSelector
	IPBlock           *ipBlock
	Ports             []port
}

type ipBlock struct {
	CIDR   string
	Except []string
}

// egressRule allows traffic to one IP range, minus Except, on Ports.
type egressRule struct {
	CIDR   string
	Except []string
	Ports  []port
}

type port struct {
	Port     string // number or name; "" means every port of Protocol
	EndPort  *int32
	Protocol string
}

// Fixed parts of the rendering. They are package variables, not literals in
// the code, so the documentation, the tests and decode use the same values.
var (
	// routerNamespace and routerLabels are where upstream's managed default
	// policy admits traffic from: the sandbox router in the controller's
	// namespace. routerPort is the router's default X-Sandbox-Port.
	routerNamespace = "agent-sandbox-system"
	routerLabels    = map[string]string{"app": "sandbox-router"}
	routerPort      = "8888"

	// namespaceNameLabel is set on every namespace by the API server, so it
	// selects a namespace by name.
	namespaceNameLabel = "kubernetes.io/metadata.name"

	// Cluster DNS: the kube-dns/CoreDNS pods (label k8s-app=kube-dns in
	// kube-system, used by upstream CoreDNS manifests, kubeadm and GKE) and
	// NodeLocal DNSCache's link-local listen address (GKE Autopilot, and
	// Standard clusters with the add-on), where pods send queries when it is
	// enabled.
	dnsNamespace    = "kube-system"
	dnsPodLabels    = map[string]string{"k8s-app": "kube-dns"}
	dnsNodeLocalIP  = "169.254.20.10/32"
	dnsPort         = "53"
	dnsProtocols    = []string{"UDP", "TCP"}
	defaultProtocol = "TCP"

	// internetV4 and internetV6 are upstream's managed default egress
	// (extensions/controllers/sandboxtemplate_controller.go,
	// buildDefaultNetworkPolicySpec): everything except private (RFC 1918),
	// link-local (which holds the metadata server) and IPv6 unique-local
	// and link-local ranges.
	internetV4 = ipBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}
	internetV6 = ipBlock{CIDR: "::/0", Except: []string{"fc00::/7", "fe80::/10"}}

	// metadataServers are the cloud metadata endpoints (GCE/GKE, AWS, Azure
	// use 169.254.169.254; AWS also serves fd00:ec2::254 on IPv6), which
	// hand out credentials to whoever asks from the node's network.
	metadataServers = []netip.Prefix{
		netip.MustParsePrefix("169.254.169.254/32"),
		netip.MustParsePrefix("fd00:ec2::254/128"),
	}
)

// spec renders p. It assumes p passed the schema's validation.
func (p policy) spec() networkingv1.NetworkPolicySpec {
	s := networkingv1.NetworkPolicySpec{
		// Always both: a policy that isolates only ingress would leave
		// egress open, and spelling them out keeps the server's defaulting
		// (Ingress, plus Egress only when there are egress rules) out of it.
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{},
		Egress:      []networkingv1.NetworkPolicyEgressRule{},
	}
	if p.Template != "" {
		s.PodSelector = metav1.LabelSelector{MatchLabels: templateSelector(p.Template)}
	} else if p.PodSelector != nil {
		s.PodSelector = p.PodSelector.render()
	}

	for _, in := range p.Ingress {
		rule := networkingv1.NetworkPolicyIngressRule{Ports: renderPorts(in.Ports)}
		switch {
		case in.NamespaceSelector != nil || in.PodSelector != nil:
			rule.From = []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: in.NamespaceSelector.renderPtr(),
				PodSelector:       in.PodSelector.renderPtr(),
			}}
		case in.IPBlock != nil:
			rule.From = []networkingv1.NetworkPolicyPeer{{IPBlock: in.IPBlock.render()}}
		}
		s.Ingress = append(s.Ingress, rule)
	}

	if p.AllowDNS {
		s.Egress = append(s.Egress, dnsRule())
	}
	if p.AllowInternet {
		s.Egress = append(s.Egress, internetRule())
	}
	for _, e := range p.AllowEgress {
		s.Egress = append(s.Egress, networkingv1.NetworkPolicyEgressRule{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: ipBlock{CIDR: e.CIDR, Except: e.Except}.render()}},
			Ports: renderPorts(e.Ports),
		})
	}
	if p.BlockMetadataServer {
		for i := range s.Egress {
			for j := range s.Egress[i].To {
				if b := s.Egress[i].To[j].IPBlock; b != nil {
					b.Except = append(b.Except, metadataCarveOut(b.CIDR, b.Except)...)
				}
			}
		}
	}
	return s
}

// templateSelector selects the pods of every sandbox made from template:
// the agent-sandbox controller labels them (through the warm pool or the
// claim) with the FNV hash of the template's name, and its own managed
// policy selects them the same way.
func templateSelector(template string) map[string]string {
	return map[string]string{sandboxapi.LabelSandboxTemplateRefHash: sandboxapi.NameHash(template)}
}

func dnsRule() networkingv1.NetworkPolicyEgressRule {
	ports := make([]port, 0, len(dnsProtocols))
	for _, proto := range dnsProtocols {
		ports = append(ports, port{Port: dnsPort, Protocol: proto})
	}
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{
			{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceNameLabel: dnsNamespace}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: copyMap(dnsPodLabels)},
			},
			{IPBlock: &networkingv1.IPBlock{CIDR: dnsNodeLocalIP}},
		},
		Ports: renderPorts(ports),
	}
}

func internetRule() networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{
		{IPBlock: internetV4.render()},
		{IPBlock: internetV6.render()},
	}}
}

// metadataCarveOut returns the metadata server ranges that cidr contains
// and no entry of except already covers, to be added to except. A cidr that
// is exactly a metadata server cannot be carved (Kubernetes wants except
// strictly inside cidr); the schema refuses it while blocking is on.
func metadataCarveOut(cidr string, except []string) []string {
	c, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range metadataServers {
		if c.Addr().Is4() != m.Addr().Is4() || c.Bits() >= m.Bits() || !c.Contains(m.Addr()) {
			continue
		}
		if !covered(m, except) {
			out = append(out, m.String())
		}
	}
	return out
}

// covered reports whether one of the ranges contains all of m.
func covered(m netip.Prefix, ranges []string) bool {
	for _, r := range ranges {
		if p, err := netip.ParsePrefix(r); err == nil && p.Addr().Is4() == m.Addr().Is4() && p.Bits() <= m.Bits() && p.Contains(m.Addr()) {
			return true
		}
	}
	return false
}

func (s *labelSelector) render() metav1.LabelSelector {
	out := metav1.LabelSelector{}
	if len(s.MatchLabels) > 0 {
		out.MatchLabels = copyMap(s.MatchLabels)
	}
	for _, r := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key:      r.Key,
			Operator: metav1.LabelSelectorOperator(r.Operator),
			Values:   append([]string(nil), r.Values...),
		})
	}
	return out
}

func (s *labelSelector) renderPtr() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := s.render()
	return &out
}

func (b ipBlock) render() *networkingv1.IPBlock {
	out := &networkingv1.IPBlock{CIDR: b.CIDR}
	if len(b.Except) > 0 {
		out.Except = append([]string(nil), b.Except...)
	}
	return out
}

// renderPorts writes every protocol explicitly: the server would default a
// missing one to TCP, and the rendered policy should say what is enforced.
func renderPorts(ports []port) []networkingv1.NetworkPolicyPort {
	if len(ports) == 0 {
		return nil
	}
	out := make([]networkingv1.NetworkPolicyPort, 0, len(ports))
	for _, p := range ports {
		proto := corev1.Protocol(p.Protocol)
		if proto == "" {
			proto = corev1.Protocol(defaultProtocol)
		}
		np := networkingv1.NetworkPolicyPort{Protocol: &proto}
		if p.Port != "" {
			// Validated by the schema; a name stays a string and a number
			// becomes an integer, as the API server stores them.
			num, name, _ := validators.ParsePort(p.Port)
			v := intstr.FromString(name)
			if name == "" {
				v = intstr.FromInt32(num)
			}
			np.Port = &v
		}
		if p.EndPort != nil {
			end := *p.EndPort
			np.EndPort = &end
		}
		out = append(out, np)
	}
	return out
}

// specContent is the canonical unstructured form of a spec: what is sent to
// the API server and what `rendered` shows. ingress and egress are always
// present, as [] when empty: sent that way, server-side apply records the
// provider as the owner of the (empty) list, so a rule someone adds out of
// band is removed by the next apply. Omitted, the added rule would survive
// every apply. (The server drops the empty list when storing the object;
// liveSpec puts it back.)
func specContent(s networkingv1.NetworkPolicySpec) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
	if err != nil {
		return nil, fmt.Errorf("converting the NetworkPolicy spec: %w", err)
	}
	for _, k := range []string{"ingress", "egress"} {
		if _, ok := m[k]; !ok {
			m[k] = []any{}
		}
	}
	return m, nil
}

// renderJSON is the `rendered` attribute: the canonical spec as indented
// JSON with sorted keys, identical for a configuration and for the live
// object it produced.
func renderJSON(s networkingv1.NetworkPolicySpec) (string, error) {
	m, err := specContent(s)
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the NetworkPolicy spec: %w", err)
	}
	return string(b), nil
}

// liveSpec reads the spec of a NetworkPolicy as the API server returned it,
// through the typed struct so that it is normalised exactly like a rendered
// one (absent and empty lists alike, integers as integers).
func liveSpec(content map[string]any) (networkingv1.NetworkPolicySpec, error) {
	var s networkingv1.NetworkPolicySpec
	raw, _ := content["spec"].(map[string]any)
	if raw == nil {
		return s, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &s); err != nil {
		return s, fmt.Errorf("reading the NetworkPolicy spec: %w", err)
	}
	return s, nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
