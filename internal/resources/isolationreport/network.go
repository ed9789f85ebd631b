package isolationreport

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netpolicy"
)

// target is one destination (or source) of a reachability verdict: one or
// more endpoints, any of which being allowed makes the verdict "allowed".
type target struct {
	what      string
	endpoints []netpolicy.Endpoint
	port      netpolicy.Port
}

func tcp(n int32) netpolicy.Port { return netpolicy.Port{Number: n, Protocol: corev1.ProtocolTCP} }

// anyPodIn is some pod of the namespace, labels unknown.
func anyPodIn(inv inventory, ns string) netpolicy.Endpoint {
	return netpolicy.PodEndpoint(netpolicy.Pod{Namespace: ns, NamespaceLabels: nsLabels(inv, ns), AnyLabels: true})
}

func podIn(inv inventory, ns string, lbls map[string]string) netpolicy.Endpoint {
	return netpolicy.PodEndpoint(netpolicy.Pod{Namespace: ns, NamespaceLabels: nsLabels(inv, ns), Labels: lbls})
}

// nsLabels are a namespace's labels; one that was not listed has at least
// the name label the API server sets on every namespace.
func nsLabels(inv inventory, ns string) map[string]string {
	if l, ok := inv.namespaces[ns]; ok {
		return l
	}
	return map[string]string{namespaceNameLabel: ns}
}

// otherNamespaces: some pod of every other namespace listed, or of one
// unlabelled namespace standing for them when none could be listed.
func otherNamespaces(inv inventory, own string) []netpolicy.Endpoint {
	var out []netpolicy.Endpoint
	for _, n := range slices.Sorted(maps.Keys(inv.namespaces)) {
		if n != own {
			out = append(out, anyPodIn(inv, n))
		}
	}
	if !inv.namespacesListed {
		out = append(out, anyPodIn(inv, "another-namespace"))
	}
	return out
}

// siblings are the pods of the other sandboxes of the same template; when
// there is none, a pod like this one stands for the next.
func siblings(inv inventory, podName string, self netpolicy.Pod) []netpolicy.Endpoint {
	hash := self.Labels[agentsv1beta1.SandboxTemplateRefHashLabel]
	if hash == "" {
		return nil
	}
	var out []netpolicy.Endpoint
	for _, n := range slices.Sorted(maps.Keys(inv.pods)) {
		p := inv.pods[n]
		if p.Labels[agentsv1beta1.SandboxTemplateRefHashLabel] != hash || p.Name == podName {
			continue
		}
		ip, _ := netip.ParseAddr(p.Status.PodIP)
		out = append(out, netpolicy.PodEndpoint(netpolicy.Pod{
			Namespace: p.Namespace, NamespaceLabels: self.NamespaceLabels, Labels: p.Labels, IP: ip, Ports: containerPorts(p.Spec),
		}))
	}
	if len(out) == 0 {
		twin := self
		twin.IP = netip.Addr{}
		out = append(out, netpolicy.PodEndpoint(twin))
	}
	return out
}

// agentPort is the port sandboxes serve: the first container port, or the
// router's default 8888.
func agentPort(spec corev1.PodSpec) netpolicy.Port {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			return netpolicy.Port{Number: p.ContainerPort, Protocol: p.Protocol}
		}
	}
	return tcp(8888)
}

func network(inv inventory, sb *agentsv1beta1.Sandbox, podName string, self netpolicy.Pod, spec corev1.PodSpec, vs *violations) networkModel {
	m := networkModel{Policies: []string{}, Egress: map[string]reachModel{}, Ingress: map[string]reachModel{}}
	for _, p := range inv.policies {
		if netpolicy.Selects(&p, self) {
			m.Policies = append(m.Policies, p.Name)
		}
	}
	sort.Strings(m.Policies)
	m.IngressIsolated = len(netpolicy.Isolating(inv.policies, self, netpolicy.Ingress)) > 0
	m.EgressIsolated = len(netpolicy.Isolating(inv.policies, self, netpolicy.Egress)) > 0
	if spec.HostNetwork {
		// NetworkPolicies do not apply to host-network pods; the violation
		// is reported with the process findings.
		m.IngressIsolated, m.EgressIsolated = false, false
	}
	src := netpolicy.PodEndpoint(self)

	egress := map[string]target{
		"metadata_server_ipv4":     {"169.254.169.254 (cloud metadata server)", []netpolicy.Endpoint{netpolicy.Addr(metadataIPv4)}, tcp(80)},
		"metadata_server_ipv6":     {"fd00:ec2::254 (AWS metadata server, IPv6)", []netpolicy.Endpoint{netpolicy.Addr(metadataIPv6AWS)}, tcp(80)},
		"metadata_server_ipv6_gce": {"fd20:ce::254 (GCE/GKE metadata server, IPv6)", []netpolicy.Endpoint{netpolicy.Addr(metadataIPv6GCE)}, tcp(80)},
		"internet_ipv4":            {"8.8.8.8 (a public IPv4 address)", []netpolicy.Endpoint{netpolicy.Addr(internetIPv4)}, tcp(443)},
		"internet_ipv6":            {"2001:4860:4860::8888 (a public IPv6 address)", []netpolicy.Endpoint{netpolicy.Addr(internetIPv6)}, tcp(443)},
		"other_namespaces":         {"any pod of another namespace", otherNamespaces(inv, sb.Namespace), netpolicy.Port{Protocol: corev1.ProtocolTCP}},
	}
	dns := target{what: "cluster DNS: kube-dns pods (k8s-app=kube-dns in kube-system) and NodeLocal DNSCache 169.254.20.10",
		endpoints: []netpolicy.Endpoint{podIn(inv, dnsNamespace, dnsLabels), netpolicy.Addr(nodeLocalDNS)},
		port:      netpolicy.Port{Number: 53, Protocol: corev1.ProtocolUDP}}
	if spec.DNSPolicy == corev1.DNSNone && spec.DNSConfig != nil {
		// The pod asks its own nameservers.
		dns = target{what: "the pod's nameservers " + strings.Join(spec.DNSConfig.Nameservers, ", "), port: dns.port}
		for _, ns := range spec.DNSConfig.Nameservers {
			if a, err := netip.ParseAddr(ns); err == nil {
				dns.endpoints = append(dns.endpoints, netpolicy.Addr(a))
			}
		}
	}
	egress["cluster_dns"] = dns
	if inv.apiService.IsValid() {
		egress["kubernetes_api_service"] = target{"the kubernetes Service " + inv.apiService.String(),
			[]netpolicy.Endpoint{netpolicy.Addr(inv.apiService.Addr())}, tcp(int32(inv.apiService.Port()))}
	} else {
		egress["kubernetes_api_service"] = target{what: "the kubernetes Service (not found)"}
	}
	// Enforcers see the API server's own address after the Service's
	// translation: the endpoints are what a policy must refuse.
	var eps []string
	for _, e := range inv.apiEndpoints {
		eps = append(eps, e.String())
	}
	apiEP := target{what: "the API server's endpoints " + strings.Join(eps, ", ")}
	if len(inv.apiEndpoints) == 0 {
		apiEP.what = "the API server's endpoints (none published)"
	}
	for _, e := range inv.apiEndpoints {
		apiEP.endpoints = append(apiEP.endpoints, netpolicy.Addr(e.Addr()))
		apiEP.port = tcp(int32(e.Port()))
	}
	egress["kubernetes_api_endpoints"] = apiEP
	for name, t := range egress {
		m.Egress[name] = reach(inv, t, func(dst netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.EgressFrom(inv.policies, self, dst, t.port), netpolicy.Verdict{Allowed: true}
		}, spec.HostNetwork)
	}
	// Other sandboxes of the same template: both ends' policies count.
	sibs := siblings(inv, podName, self)
	if len(sibs) > 0 {
		port := agentPort(spec)
		t := target{"the other sandboxes of the template", sibs, port}
		m.Egress["same_template"] = reach(inv, t, func(dst netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.Connect(inv.policies, src, dst, port)
		}, spec.HostNetwork)
		m.Ingress["from_same_template"] = reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.Connect(inv.policies, from, src, port)
		}, spec.HostNetwork)
	}

	someTCP := netpolicy.Port{Protocol: corev1.ProtocolTCP}
	ingress := map[string]target{
		"from_other_namespaces": {"any pod of another namespace", otherNamespaces(inv, sb.Namespace), someTCP},
		"from_same_namespace":   {"any pod of the sandbox's namespace", []netpolicy.Endpoint{anyPodIn(inv, sb.Namespace)}, someTCP},
		"from_internet":         {"8.8.8.8 (a public IPv4 address)", []netpolicy.Endpoint{netpolicy.Addr(internetIPv4)}, someTCP},
	}
	for name, t := range ingress {
		m.Ingress[name] = reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.Verdict{Allowed: true}, netpolicy.IngressTo(inv.policies, self, from, t.port)
		}, spec.HostNetwork)
	}
	m.Ingress["from_sandbox_router"] = routerPath(inv, self, spec)
	for _, p := range inv.destinations {
		t := probeTarget(inv, p)
		m.Egress[p.Name] = reach(inv, t, func(dst netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			if dst.Pod != nil {
				return netpolicy.Connect(inv.policies, src, dst, t.port)
			}
			return netpolicy.EgressFrom(inv.policies, self, dst, t.port), netpolicy.Verdict{Allowed: true}
		}, spec.HostNetwork)
	}
	for _, p := range inv.sources {
		t := probeTarget(inv, p)
		m.Ingress[p.Name] = reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.Connect(inv.policies, from, src, t.port)
		}, spec.HostNetwork)
	}

	const (
		ingressAttr = "network.ingress_isolated"
		egressAttr  = "network.egress_isolated"
	)
	if !m.IngressIsolated && !spec.HostNetwork {
		vs.add(ingressAttr, "No NetworkPolicy isolates the sandbox's ingress",
			"No NetworkPolicy of namespace %q selects the pod for Ingress, so every pod and address may connect to it. Select it with a default-deny policy (agentsandbox_network_policy).", sb.Namespace)
	}
	if !m.EgressIsolated && !spec.HostNetwork {
		vs.add(egressAttr, "No NetworkPolicy isolates the sandbox's egress",
			"No NetworkPolicy of namespace %q selects the pod for Egress, so it may connect anywhere: the metadata server, the Kubernetes API, other namespaces. Select it with a default-deny policy (agentsandbox_network_policy).", sb.Namespace)
	}
	for _, k := range []string{"metadata_server_ipv4", "metadata_server_ipv6", "metadata_server_ipv6_gce"} {
		if r := m.Egress[k]; r.Verdict == verdictAllowed {
			vs.add("network.egress."+k, "Metadata server reachable",
				"The sandbox can reach the cloud metadata server %s: %s. Its instance credentials and metadata are exposed to untrusted code; except it from every allowed range (block_metadata_server).", r.Address, r.Reason)
		}
	}
	for _, k := range []string{"kubernetes_api_service", "kubernetes_api_endpoints"} {
		if r := m.Egress[k]; r.Verdict == verdictAllowed {
			vs.add("network.egress."+k, "Kubernetes API reachable",
				"The sandbox can reach %s: %s.", r.Address, r.Reason)
		}
	}
	if r, ok := m.Egress["same_template"]; ok && r.Verdict == verdictAllowed {
		vs.add("network.egress.same_template", "Sandboxes of the same template can reach each other",
			"The sandbox can connect to other sandboxes of its template on %s/%d: %s. A compromised sandbox can attack its neighbours.", r.Protocol, r.Port, r.Reason)
	}
	return m
}

func probeTarget(inv inventory, p probe) target {
	port := netpolicy.Port{Number: p.Port, Protocol: p.Protocol}
	if p.Address.IsValid() {
		return target{p.Address.String(), []netpolicy.Endpoint{netpolicy.Addr(p.Address)}, port}
	}
	return target{fmt.Sprintf("pods %s in %s", labelsString(p.Labels), p.Namespace), []netpolicy.Endpoint{podIn(inv, p.Namespace, p.Labels)}, port}
}

func labelsString(l map[string]string) string {
	parts := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	if len(parts) == 0 {
		return "(any labels)"
	}
	return strings.Join(parts, ",")
}

// reach evaluates a target: allowed when any endpoint is allowed by both
// verdicts eval returns (egress of the source, ingress of the
// destination); unknown when the target has no endpoint.
func reach(_ inventory, t target, eval func(netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict), hostNetwork bool) reachModel {
	r := reachModel{Address: t.what, Port: int64(t.port.Number), Protocol: string(t.port.Protocol), AllowedBy: []string{}}
	if r.Protocol == "" {
		r.Protocol = string(corev1.ProtocolTCP)
	}
	if len(t.endpoints) == 0 {
		r.Verdict, r.Reason = verdictUnknown, "nothing to evaluate: the cluster publishes no address for it"
		return r
	}
	if hostNetwork {
		r.Verdict, r.Reason = verdictAllowed, "the pod uses the host's network, which NetworkPolicies do not govern"
		return r
	}
	var reasons []string
	for _, e := range t.endpoints {
		eg, in := eval(e)
		if eg.Allowed && in.Allowed {
			r.Verdict = verdictAllowed
			by := append(append([]string{}, eg.AllowedBy...), in.AllowedBy...)
			for _, b := range by {
				if !contains(r.AllowedBy, b) {
					r.AllowedBy = append(r.AllowedBy, b)
				}
			}
			r.Reason = "no NetworkPolicy isolates it"
			if len(r.AllowedBy) > 0 {
				r.Reason = "allowed by the NetworkPolicies " + strings.Join(r.AllowedBy, ", ")
			}
			return r
		}
		if !eg.Allowed {
			reasons = append(reasons, "egress: "+eg.String())
		} else {
			reasons = append(reasons, "ingress: "+in.String())
		}
	}
	r.Verdict = verdictDenied
	r.Reason = dedupe(reasons)
	return r
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func dedupe(l []string) string {
	var out []string
	for _, s := range l {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// routerPath is the verdict of the path router -> sandbox on the sandbox's
// agent port: from the router of router_namespace, with its pods' labels
// when it is installed, through its own egress policies and the
// sandbox's ingress ones; when it is not installed, from where upstream's
// managed policy expects it (app=sandbox-router), through the sandbox's
// ingress policies only (no router, no router policy to read).
func routerPath(inv inventory, self netpolicy.Pod, spec corev1.PodSpec) reachModel {
	ns := inv.router.namespace
	if ns == "" {
		ns = routerNamespace
	}
	port := agentPort(spec)
	if inv.router.deployment == nil {
		t := target{fmt.Sprintf("the sandbox router (app=sandbox-router in %s, not installed)", ns), []netpolicy.Endpoint{podIn(inv, ns, routerLabels)}, port}
		return reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.Verdict{Allowed: true}, netpolicy.IngressTo(inv.policies, self, from, port)
		}, spec.HostNetwork)
	}
	policies := inv.policies
	if ns != inv.namespace {
		policies = append(append([]networkingv1.NetworkPolicy{}, inv.policies...), inv.router.policies...)
	}
	t := target{fmt.Sprintf("the sandbox router (Deployment %s/%s)", ns, routerDeployment),
		[]netpolicy.Endpoint{podIn(inv, ns, inv.router.deployment.Spec.Template.Labels)}, port}
	return reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
		return netpolicy.Connect(policies, from, netpolicy.PodEndpoint(self), port)
	}, spec.HostNetwork)
}
