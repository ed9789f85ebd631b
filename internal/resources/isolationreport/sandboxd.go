package isolationreport

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// sandboxdModel is one container of a sandbox that runs upstream's
// sandboxd (sandboxapi.SandboxdOf).
type sandboxdModel struct {
	Container             string                `tfsdk:"container"`
	RESTPort              int64                 `tfsdk:"rest_port"`
	GRPCPort              int64                 `tfsdk:"grpc_port"`
	ListenHost            string                `tfsdk:"listen_host"`
	Authentication        string                `tfsdk:"authentication"`
	ReachableBeyondRouter bool                  `tfsdk:"reachable_beyond_router"`
	ReachableFrom         map[string]reachModel `tfsdk:"reachable_from"`
}

// sandboxdSources are who, besides the router, could reach sandboxd: the
// same built-in sources as the sandbox's ingress verdicts.
func sandboxdSources(inv inventory, ns string) map[string]target {
	return map[string]target{
		"from_same_namespace":   {"any pod of the sandbox's namespace", []netpolicy.Endpoint{anyPodIn(inv, ns)}, netpolicy.Port{}},
		"from_other_namespaces": {"any pod of another namespace", otherNamespaces(inv, ns), netpolicy.Port{}},
		"from_internet":         {"8.8.8.8 (a public IPv4 address)", []netpolicy.Endpoint{netpolicy.Addr(internetIPv4)}, netpolicy.Port{}},
	}
}

// sandboxd reports the sandbox's sandboxd containers: sandboxd has no
// authentication (v1.0.3 has no token option: anyone who reaches its REST
// port reads and writes files, its gRPC port runs commands), so the
// NetworkPolicies are its only guard. A sandboxd that anything but the
// router reaches, on either port, is a violation.
func sandboxd(inv inventory, ns string, self netpolicy.Pod, spec corev1.PodSpec, vs *violations) []sandboxdModel {
	out := []sandboxdModel{}
	for _, c := range spec.Containers {
		d, ok := sandboxapi.SandboxdOf(c)
		if !ok {
			continue
		}
		m := sandboxdModel{Container: d.Container, RESTPort: int64(d.RESTPort), GRPCPort: int64(d.GRPCPort), ListenHost: d.ListenHost,
			Authentication: "none", ReachableFrom: map[string]reachModel{}}
		var open []string
		for name, t := range sandboxdSources(inv, ns) {
			for _, p := range []struct {
				api  string
				port int32
			}{{"rest", d.RESTPort}, {"grpc", d.GRPCPort}} {
				t.port = tcp(p.port)
				key := p.api + "_" + name
				switch {
				case d.Loopback():
					m.ReachableFrom[key] = reachModel{Address: t.what, Port: int64(p.port), Protocol: string(corev1.ProtocolTCP), AllowedBy: []string{},
						Verdict: verdictDenied, Reason: "sandboxd listens on " + d.ListenHost + " only (--listen-host)"}
				default:
					m.ReachableFrom[key] = reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
						return netpolicy.Verdict{Allowed: true}, netpolicy.IngressTo(inv.policies, self, from, t.port)
					}, spec.HostNetwork)
				}
				if r := m.ReachableFrom[key]; r.Verdict == verdictAllowed {
					m.ReachableBeyondRouter = true
					open = append(open, fmt.Sprintf("%s on %d (%s)", t.what, p.port, r.Reason))
				}
			}
		}
		if m.ReachableBeyondRouter {
			sort.Strings(open)
			vs.add("network_policy", "sandboxd reachable beyond the router",
				"Container %q runs sandboxd, which has no authentication: whoever reaches its port %d reads and writes the "+
					"sandbox's files, and its port %d runs commands in it. It listens on %s, and the NetworkPolicies let in: %s. "+
					"Admit only the sandbox router to the sandbox (agentsandbox_network_policy's default ingress), or start "+
					"sandboxd with --listen-host=127.0.0.1 when only the pod's own containers use it.",
				d.Container, d.RESTPort, d.GRPCPort, d.ListenHost, strings.Join(open, "; "))
		}
		out = append(out, m)
	}
	return out
}
