// Package netpolicy evaluates Kubernetes NetworkPolicies (networking.k8s.io/v1)
// the way the API documents them: the one place in the provider that decides
// whether a connection is allowed. data.agentsandbox_isolation_report uses it
// for its reachability verdicts, and the real-node end-to-end run compares
// those verdicts with what the enforcer really did with each packet.
//
// The semantics, from the API's own documentation (k8s.io/api
// networking/v1 types.go, NetworkPolicySpec, NetworkPolicyPeer,
// NetworkPolicyPort, IPBlock):
//
//   - A pod is isolated for egress (ingress) when at least one policy of its
//     namespace selects it (podSelector) and lists Egress (Ingress) in its
//     policyTypes. policyTypes left empty means Ingress, plus Egress when the
//     policy has egress rules (what the API server defaults it to).
//   - An isolated pod's traffic in that direction is allowed when any rule of
//     any selecting policy allows it: policies are a union, there is no deny.
//     A pod that is not isolated in a direction allows everything in it.
//   - A rule allows a connection when one of its ports matches (no ports:
//     every port of every protocol) and one of its peers matches (no peers:
//     every source or destination). A port entry without a protocol is TCP; one
//     without a port is every port of its protocol; endPort makes a range; a
//     named port matches a container port of that name and protocol on the pod
//     the traffic is addressed to.
//   - A peer with podSelector alone selects pods of the policy's namespace;
//     with namespaceSelector alone every pod of the namespaces it selects; with
//     both, the pods it selects in the namespaces it selects. An ipBlock
//     selects the addresses of its CIDR minus its except ranges.
//   - A connection between two pods needs the source's egress and the
//     destination's ingress.
//
// Peers can be concrete (a pod's namespace labels, labels and IP) or partly
// abstract: a pod whose labels are unknown (AnyLabels) stands for "some pod
// there", and matches a pod selector when some labels would satisfy it. That
// is how the report answers "can any pod of another namespace reach this
// sandbox" without listing every pod of the cluster.
//
// No maintained library evaluator is served by the Go module proxy here:
// github.com/np-guard/netpol-analyzer is refused by the proxy (403), and
// github.com/mattfenwick/cyclonus (served, v0.5.6) is archived; both also
// evaluate concrete pod pairs only.
package netpolicy

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod is a pod as the policies see it.
type Pod struct {
	Namespace string
	// NamespaceLabels are the labels of the pod's namespace (the API server
	// sets kubernetes.io/metadata.name on every namespace).
	NamespaceLabels map[string]string
	Labels          map[string]string
	// AnyLabels: the pod's labels are unknown; it stands for some pod of the
	// namespace, and matches a pod selector when any labels could.
	AnyLabels bool
	// IP is the pod's address, when known (ipBlock peers match it).
	IP netip.Addr
	// Ports are its containers' ports, for named ports.
	Ports []corev1.ContainerPort
}

// Endpoint is one side of a connection: a pod, or an address outside the
// cluster's pods (Pod nil).
type Endpoint struct {
	Pod *Pod
	IP  netip.Addr
}

// Addr is an endpoint outside the cluster's pods.
func Addr(ip netip.Addr) Endpoint { return Endpoint{IP: ip} }

// PodEndpoint is a pod.
func PodEndpoint(p Pod) Endpoint { return Endpoint{Pod: &p, IP: p.IP} }

// Port is the destination port and protocol of a connection. Number 0 means
// "some port of Protocol": a rule matches when any of its ports could.
type Port struct {
	Number   int32
	Protocol corev1.Protocol
}

// Verdict is the outcome of one direction (or both) of a connection.
type Verdict struct {
	Allowed bool
	// Isolated: some policy selects the pod in this direction. A pod that
	// is not isolated allows everything.
	Isolated bool
	// Policies are the names of the policies that select the pod for this
	// direction; AllowedBy those of them with a rule that allows it.
	Policies  []string
	AllowedBy []string
}

// Direction is the kind of policy rule.
type Direction string

const (
	Ingress Direction = "Ingress"
	Egress  Direction = "Egress"
)

// Selects reports whether the policy selects the pod (same namespace and
// podSelector matches).
func Selects(pol *networkingv1.NetworkPolicy, p Pod) bool {
	if pol.Namespace != p.Namespace {
		return false
	}
	return selectorMatches(&pol.Spec.PodSelector, p.Labels, p.AnyLabels)
}

// HasType reports whether the policy governs the direction (policyTypes,
// or the API server's default when it is empty).
func HasType(pol *networkingv1.NetworkPolicy, d Direction) bool {
	types := pol.Spec.PolicyTypes
	if len(types) == 0 {
		types = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(pol.Spec.Egress) > 0 {
			types = append(types, networkingv1.PolicyTypeEgress)
		}
	}
	return slices.Contains(types, networkingv1.PolicyType(d))
}

// Isolating lists, sorted by name, the policies that isolate the pod in the
// direction.
func Isolating(policies []networkingv1.NetworkPolicy, p Pod, d Direction) []*networkingv1.NetworkPolicy {
	var out []*networkingv1.NetworkPolicy
	for i := range policies {
		pol := &policies[i]
		if Selects(pol, p) && HasType(pol, d) {
			out = append(out, pol)
		}
	}
	slices.SortFunc(out, func(a, b *networkingv1.NetworkPolicy) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// EgressFrom decides whether the policies let src send to dst on port.
// Only src's egress is evaluated; see Connect for both sides.
func EgressFrom(policies []networkingv1.NetworkPolicy, src Pod, dst Endpoint, port Port) Verdict {
	return decide(policies, src, Egress, func(pol *networkingv1.NetworkPolicy) bool {
		return slices.ContainsFunc(pol.Spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool {
			return portsMatch(r.Ports, port, dst.Pod) && peersMatch(r.To, pol.Namespace, dst)
		})
	})
}

// IngressTo decides whether the policies let dst receive from src on port.
// Only dst's ingress is evaluated; see Connect for both sides.
func IngressTo(policies []networkingv1.NetworkPolicy, dst Pod, src Endpoint, port Port) Verdict {
	return decide(policies, dst, Ingress, func(pol *networkingv1.NetworkPolicy) bool {
		return slices.ContainsFunc(pol.Spec.Ingress, func(r networkingv1.NetworkPolicyIngressRule) bool {
			return portsMatch(r.Ports, port, &dst) && peersMatch(r.From, pol.Namespace, src)
		})
	})
}

// decide is the verdict for pod in direction d: isolated when a policy
// selects it for d, and then allowed when one of those policies has a rule
// that allows the connection.
func decide(policies []networkingv1.NetworkPolicy, pod Pod, d Direction, allows func(*networkingv1.NetworkPolicy) bool) Verdict {
	v := Verdict{}
	for _, pol := range Isolating(policies, pod, d) {
		v.Isolated = true
		v.Policies = append(v.Policies, pol.Name)
		if allows(pol) {
			v.AllowedBy = append(v.AllowedBy, pol.Name)
		}
	}
	v.Allowed = !v.Isolated || len(v.AllowedBy) > 0
	return v
}

// Connect decides a connection from src to dst: the source's egress when
// it is a pod, and the destination's ingress when it is a pod.
func Connect(policies []networkingv1.NetworkPolicy, src, dst Endpoint, port Port) (egress, ingress Verdict) {
	egress, ingress = Verdict{Allowed: true}, Verdict{Allowed: true}
	if src.Pod != nil {
		egress = EgressFrom(policies, *src.Pod, dst, port)
	}
	if dst.Pod != nil {
		ingress = IngressTo(policies, *dst.Pod, src, port)
	}
	return egress, ingress
}

// portsMatch: no entries means every port; otherwise one entry matches.
// dst is the pod the traffic is addressed to (named ports), nil for an
// address.
func portsMatch(ports []networkingv1.NetworkPolicyPort, port Port, dst *Pod) bool {
	return len(ports) == 0 || slices.ContainsFunc(ports, func(p networkingv1.NetworkPolicyPort) bool {
		return portMatches(p, port, dst)
	})
}

func portMatches(p networkingv1.NetworkPolicyPort, port Port, dst *Pod) bool {
	proto := corev1.ProtocolTCP
	if p.Protocol != nil {
		proto = *p.Protocol
	}
	want := port.Protocol
	if want == "" {
		want = corev1.ProtocolTCP
	}
	if proto != want {
		return false
	}
	if p.Port == nil {
		return true
	}
	if p.Port.Type == intstr.String { // a named port
		if dst == nil {
			return false
		}
		for _, cp := range dst.Ports {
			cpProto := cp.Protocol
			if cpProto == "" {
				cpProto = corev1.ProtocolTCP
			}
			if cp.Name == p.Port.StrVal && cpProto == want && (port.Number == 0 || cp.ContainerPort == port.Number) {
				return true
			}
		}
		return false
	}
	if port.Number == 0 {
		return true
	}
	lo := p.Port.IntVal
	hi := lo
	if p.EndPort != nil {
		hi = *p.EndPort
	}
	return port.Number >= lo && port.Number <= hi
}

// peersMatch: no peers means every peer; otherwise one matches. ns is the
// policy's namespace.
func peersMatch(peers []networkingv1.NetworkPolicyPeer, ns string, e Endpoint) bool {
	return len(peers) == 0 || slices.ContainsFunc(peers, func(p networkingv1.NetworkPolicyPeer) bool {
		return peerMatches(p, ns, e)
	})
}

func peerMatches(p networkingv1.NetworkPolicyPeer, ns string, e Endpoint) bool {
	if p.IPBlock != nil {
		return e.IP.IsValid() && InBlock(*p.IPBlock, e.IP)
	}
	if e.Pod == nil {
		return false
	}
	if p.NamespaceSelector != nil {
		if !selectorMatches(p.NamespaceSelector, e.Pod.NamespaceLabels, false) {
			return false
		}
	} else if e.Pod.Namespace != ns {
		return false
	}
	if p.PodSelector == nil {
		return true
	}
	return selectorMatches(p.PodSelector, e.Pod.Labels, e.Pod.AnyLabels)
}

// InBlock reports whether ip is in the block's CIDR and in none of its
// except ranges. A malformed CIDR (the API server refuses them) matches
// nothing; a malformed except range excludes nothing.
func InBlock(b networkingv1.IPBlock, ip netip.Addr) bool {
	ip = ip.Unmap()
	pfx, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !pfx.Contains(ip) {
		return false
	}
	for _, ex := range b.Except {
		if e, err := netip.ParsePrefix(ex); err == nil && e.Contains(ip) {
			return false
		}
	}
	return true
}

// selectorMatches evaluates a label selector (an empty one selects
// everything). With anyLabels the labels are unknown: the selector matches
// when some set of labels would satisfy every requirement.
func selectorMatches(sel *metav1.LabelSelector, lbls map[string]string, anyLabels bool) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false // the API server refuses invalid selectors
	}
	if !anyLabels {
		return s.Matches(labels.Set(lbls))
	}
	reqs, _ := s.Requirements()
	return satisfiable(reqs)
}

// satisfiable reports whether some label set meets every requirement: per
// key, the requirements must leave at least one choice (absent, or some
// value).
func satisfiable(reqs labels.Requirements) bool {
	byKey := map[string][]labels.Requirement{}
	for _, r := range reqs {
		byKey[r.Key()] = append(byKey[r.Key()], r)
	}
	for _, rs := range byKey {
		if !keySatisfiable(rs) {
			return false
		}
	}
	return true
}

func keySatisfiable(rs []labels.Requirement) bool {
	// Candidate values: every value mentioned, plus one mentioned nowhere,
	// plus "absent".
	cands := []*string{nil}
	fresh := "\x00unmentioned"
	cands = append(cands, &fresh)
	for _, r := range rs {
		for _, v := range r.ValuesUnsorted() {
			cands = append(cands, &v)
		}
	}
	for _, c := range cands {
		ok := true
		for _, r := range rs {
			set := labels.Set{}
			if c != nil {
				set[r.Key()] = *c
			}
			if !r.Matches(set) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// String is a short human form: "allowed by a, b", "denied by a (no rule
// allows it)", "allowed (no policy selects the pod)".
func (v Verdict) String() string {
	switch {
	case !v.Isolated:
		return "allowed (no policy isolates the pod)"
	case v.Allowed:
		return "allowed by " + strings.Join(v.AllowedBy, ", ")
	default:
		return fmt.Sprintf("denied: no rule of %s allows it", strings.Join(v.Policies, ", "))
	}
}
