package netrules

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Decode reads live rules back into what renders them, for import. For
// rules this package rendered, the result is the canonical configuration:
// Decode(i.Render()) == i whenever i uses the defaults where a default
// would do (see the round-trip tests of agentsandbox_network_policy).
//
// Rules written by other means are taken in when the attributes can
// express what they enforce; a rule with several peers becomes one entry
// per peer, which grants exactly the same traffic (the next plan then shows
// the rules rewritten into that shape). What cannot be expressed without
// changing what is enforced is refused with the reason.
func Decode(ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule) (Intent, error) {
	var p Intent
	p.Ingress = []IngressRule{}
	for _, r := range ingress {
		ports := decodePorts(r.Ports)
		if len(r.From) == 0 {
			p.Ingress = append(p.Ingress, IngressRule{Ports: ports})
			continue
		}
		for _, peer := range r.From {
			in := IngressRule{Ports: ports}
			if peer.IPBlock != nil {
				in.IPBlock = &IPBlock{CIDR: peer.IPBlock.CIDR, Except: nilIfEmpty(peer.IPBlock.Except)}
			}
			if peer.NamespaceSelector != nil {
				in.NamespaceSelector = DecodeSelector(*peer.NamespaceSelector)
			}
			if peer.PodSelector != nil {
				in.PodSelector = DecodeSelector(*peer.PodSelector)
			}
			p.Ingress = append(p.Ingress, in)
		}
	}

	p.BlockMetadataServer = metadataBlocked(egress)
	dns, internet := dnsRule(), internetRule()
	if p.BlockMetadataServer {
		carve(&internet)
	}
	for i, r := range egress {
		switch {
		case !p.AllowDNS && equality.Semantic.DeepEqual(r, dns):
			p.AllowDNS = true
			continue
		case !p.AllowInternet && equality.Semantic.DeepEqual(r, internet):
			p.AllowInternet = true
			continue
		case len(r.To) == 0:
			return p, fmt.Errorf("egress[%d] allows every destination; allow_egress needs a cidr (write 0.0.0.0/0 and ::/0 "+
				"to allow everything, which the metadata server carve-out then applies to)", i)
		}
		ports := decodePorts(r.Ports)
		for _, peer := range r.To {
			if peer.IPBlock == nil {
				e := EgressRule{Ports: ports}
				if peer.NamespaceSelector != nil {
					e.NamespaceSelector = DecodeSelector(*peer.NamespaceSelector)
				}
				if peer.PodSelector != nil {
					e.PodSelector = DecodeSelector(*peer.PodSelector)
				}
				p.AllowEgress = append(p.AllowEgress, e)
				continue
			}
			except := peer.IPBlock.Except
			if p.BlockMetadataServer {
				except = uncarve(peer.IPBlock.CIDR, except)
			}
			p.AllowEgress = append(p.AllowEgress, EgressRule{CIDR: peer.IPBlock.CIDR, Except: nilIfEmpty(except), Ports: ports})
		}
	}
	return p, nil
}

// metadataBlocked tells whether the egress rules keep every metadata server
// out: no range that contains one leaves it uncovered by its except list.
// With nothing containing a metadata server either value renders the same,
// and the default (true) is the canonical one.
func metadataBlocked(rules []networkingv1.NetworkPolicyEgressRule) bool {
	for _, r := range rules {
		for _, peer := range r.To {
			b := peer.IPBlock
			if b == nil {
				continue
			}
			c, err := netip.ParsePrefix(b.CIDR)
			if err != nil {
				continue
			}
			for _, m := range metadataServers {
				if c.Addr().Is4() == m.Addr().Is4() && c.Bits() <= m.Bits() && c.Contains(m.Addr()) && !covered(m, b.Except) {
					return false
				}
			}
		}
	}
	return true
}

// carve applies the metadata carve-out to a rule, as render does.
func carve(r *networkingv1.NetworkPolicyEgressRule) {
	for j := range r.To {
		if b := r.To[j].IPBlock; b != nil {
			b.Except = append(b.Except, metadataCarveOut(b.CIDR, b.Except)...)
		}
	}
}

// uncarve removes from except the metadata server entries that render
// would add back, so that the imported except list is what the user writes.
func uncarve(cidr string, except []string) []string {
	out := slices.Clone(except)
	for _, m := range metadataServers {
		i := slices.Index(out, m.String())
		if i < 0 {
			continue
		}
		rest := slices.Delete(slices.Clone(out), i, i+1)
		if len(metadataCarveOut(cidr, rest)) == 1 {
			out = rest
		}
	}
	return out
}

// DecodeSelector is the Selector of a live label selector.
func DecodeSelector(s metav1.LabelSelector) *Selector {
	out := &Selector{}
	if len(s.MatchLabels) > 0 {
		out.MatchLabels = copyMap(s.MatchLabels)
	}
	for _, r := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, Requirement{
			Key: r.Key, Operator: string(r.Operator), Values: nilIfEmpty(r.Values),
		})
	}
	return out
}

func decodePorts(ports []networkingv1.NetworkPolicyPort) []Port {
	if len(ports) == 0 {
		return nil
	}
	out := make([]Port, 0, len(ports))
	for _, np := range ports {
		p := Port{Protocol: defaultProtocol}
		if np.Protocol != nil {
			p.Protocol = string(*np.Protocol)
		}
		if np.Port != nil {
			if np.Port.Type == intstr.Int {
				p.Port = strconv.Itoa(int(np.Port.IntVal))
			} else {
				p.Port = np.Port.StrVal
			}
		}
		if np.EndPort != nil {
			end := *np.EndPort
			p.EndPort = &end
		}
		out = append(out, p)
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
