package netrules

import (
	"encoding/json"
	"fmt"
	"net/netip"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Intent is what the rule attributes ask for, every value known: the
// attributes without Terraform's null/unknown wrappers. Render turns it into
// NetworkPolicy rules and Decode turns rules back into it.
//
// Slices keep the difference between nil (attribute not set) and empty
// (set to []) so that imported rules have the attribute values the
// canonical configuration would have.
type Intent struct {
	Ingress             []IngressRule
	AllowDNS            bool
	AllowInternet       bool
	AllowEgress         []EgressRule
	BlockMetadataServer bool
}

// Selector is a label selector (also the pod selector of
// agentsandbox_network_policy).
type Selector struct {
	MatchLabels      map[string]string
	MatchExpressions []Requirement
}

// Requirement is one set-based requirement of a Selector.
type Requirement struct {
	Key      string
	Operator string
	Values   []string
}

// IngressRule admits traffic from one kind of peer (pods and/or
// namespaces, or an IP range; none means every source) on Ports (none
// means every port).
type IngressRule struct {
	NamespaceSelector *Selector
	PodSelector       *Selector
	IPBlock           *IPBlock
	Ports             []Port
}

// IPBlock is an IP range minus Except.
type IPBlock struct {
	CIDR   string
	Except []string
}

// EgressRule allows traffic on Ports to one IP range (CIDR minus Except),
// or to the pods NamespaceSelector and PodSelector choose (CIDR empty).
type EgressRule struct {
	CIDR              string
	Except            []string
	NamespaceSelector *Selector
	PodSelector       *Selector
	Ports             []Port
}

// peer is the NetworkPolicyPeer of the rule.
func (e EgressRule) peer() networkingv1.NetworkPolicyPeer {
	if e.CIDR == "" {
		return networkingv1.NetworkPolicyPeer{NamespaceSelector: e.NamespaceSelector.RenderPtr(), PodSelector: e.PodSelector.RenderPtr()}
	}
	return networkingv1.NetworkPolicyPeer{IPBlock: IPBlock{CIDR: e.CIDR, Except: e.Except}.render()}
}

// Port is a port, a port range (EndPort) or every port of Protocol.
type Port struct {
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
	routerLabels    = map[string]string{sandboxapi.RouterLabelKey: sandboxapi.RouterLabelValue}
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
	internetV4 = IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}
	internetV6 = IPBlock{CIDR: "::/0", Except: []string{"fc00::/7", "fe80::/10"}}

	// metadataServers are the cloud metadata endpoints (GCE/GKE, AWS, Azure
	// use 169.254.169.254; AWS also serves fd00:ec2::254 on IPv6), which
	// hand out credentials to whoever asks from the node's network.
	metadataServers = []netip.Prefix{
		netip.MustParsePrefix("169.254.169.254/32"),
		netip.MustParsePrefix("fd00:ec2::254/128"),
	}
)

// Render returns the ingress and egress rules i stands for, with the
// metadata-server carve-out applied; both are non-nil ([] when empty). It
// assumes i passed the schema's validation.
func (i Intent) Render() ([]networkingv1.NetworkPolicyIngressRule, []networkingv1.NetworkPolicyEgressRule) {
	ingress := []networkingv1.NetworkPolicyIngressRule{}
	egress := []networkingv1.NetworkPolicyEgressRule{}
	for _, in := range i.Ingress {
		rule := networkingv1.NetworkPolicyIngressRule{Ports: renderPorts(in.Ports)}
		switch {
		case in.NamespaceSelector != nil || in.PodSelector != nil:
			rule.From = []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: in.NamespaceSelector.RenderPtr(),
				PodSelector:       in.PodSelector.RenderPtr(),
			}}
		case in.IPBlock != nil:
			rule.From = []networkingv1.NetworkPolicyPeer{{IPBlock: in.IPBlock.render()}}
		}
		ingress = append(ingress, rule)
	}

	if i.AllowDNS {
		egress = append(egress, dnsRule())
	}
	if i.AllowInternet {
		egress = append(egress, internetRule())
	}
	for _, e := range i.AllowEgress {
		egress = append(egress, networkingv1.NetworkPolicyEgressRule{
			To:    []networkingv1.NetworkPolicyPeer{e.peer()},
			Ports: renderPorts(e.Ports),
		})
	}
	if i.BlockMetadataServer {
		for k := range egress {
			carve(&egress[k])
		}
	}
	return ingress, egress
}

func dnsRule() networkingv1.NetworkPolicyEgressRule {
	ports := make([]Port, 0, len(dnsProtocols))
	for _, proto := range dnsProtocols {
		ports = append(ports, Port{Port: dnsPort, Protocol: proto})
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

// Render is the API form of s.
func (s *Selector) Render() metav1.LabelSelector {
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

// RenderPtr is Render, nil for nil.
func (s *Selector) RenderPtr() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := s.Render()
	return &out
}

func (b IPBlock) render() *networkingv1.IPBlock {
	out := &networkingv1.IPBlock{CIDR: b.CIDR}
	if len(b.Except) > 0 {
		out.Except = append([]string(nil), b.Except...)
	}
	return out
}

// renderPorts writes every protocol explicitly: the server would default a
// missing one to TCP, and the rendered policy should say what is enforced.
func renderPorts(ports []Port) []networkingv1.NetworkPolicyPort {
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

// SpecContent is the canonical unstructured form of a NetworkPolicy spec:
// what is sent to the API server and what `rendered` shows. ingress and
// egress are always present, as [] when empty: sent that way, server-side
// apply records the provider as the owner of the (empty) list, so a rule
// someone adds out of band is removed by the next apply. Omitted, the
// added rule would survive every apply. (The server drops the empty list
// when storing the object; reading through the typed struct puts it back.)
func SpecContent(s networkingv1.NetworkPolicySpec) (map[string]any, error) {
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

// CanonicalJSON is content as indented JSON with sorted keys: identical for
// a configuration and for the live object it produced.
func CanonicalJSON(content map[string]any) (string, error) {
	b, err := json.MarshalIndent(content, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the network policy: %w", err)
	}
	return string(b), nil
}

// Content is the canonical unstructured form of rules as a template's
// spec.networkPolicy: both lists always present, [] when empty, so that the
// provider owns the empty list and a rule added out of band is removed by
// the next apply (the same reason SpecContent spells them out).
func Content(ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule) (map[string]any, error) {
	m, err := SpecContent(networkingv1.NetworkPolicySpec{Ingress: ingress, Egress: egress})
	if err != nil {
		return nil, err
	}
	// A template carries only the rules: the controller supplies the pod
	// selector and the policy types.
	return map[string]any{"ingress": m["ingress"], "egress": m["egress"]}, nil
}

// JSON is Content as canonical JSON.
func JSON(ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule) (string, error) {
	m, err := Content(ingress, egress)
	if err != nil {
		return "", err
	}
	return CanonicalJSON(m)
}

// Live reads rules from their unstructured form (a template's
// spec.networkPolicy as the API server returned it), through the typed
// structs so that they are normalised exactly like rendered ones.
func Live(content map[string]any) ([]networkingv1.NetworkPolicyIngressRule, []networkingv1.NetworkPolicyEgressRule, error) {
	var s networkingv1.NetworkPolicySpec
	if content == nil {
		return nil, nil, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, &s); err != nil {
		return nil, nil, fmt.Errorf("reading the network policy rules: %w", err)
	}
	return s.Ingress, s.Egress, nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
