package realnode

import (
	"fmt"
	"strings"
)

// The network probes of the end-to-end run, as data: who connects, to
// what, and whether the policy must let it through. TestE2E runs every
// probe from inside the real gVisor pods and fails on any other verdict;
// the list is exported so that other checks (e.g. an isolation report's
// verdicts) can be compared against it.
//
// The world the probes see is built by the test (outside_test.go):
// destinations below are addresses of a network namespace the test owns,
// joined to the real node's with one veth pair; nothing is routed to the
// host. Roles name the pods:
//
//	sandbox   the warm pool's sandbox of the template "e2e-python", selected by
//	          an agentsandbox_network_policy with allow_dns and allow_egress
//	          (AllowListEgress), default ingress
//	internet  the warm pool's sandbox of the template "e2e-internet", selected by
//	          a policy with allow_internet only, default ingress
//	managed   the warm pool's sandbox of the template "e2e-managed", whose network
//	          policy management is "Managed" without network_policy: the policy is
//	          the controller's default (written by the release's real
//	          controller, run by the test harness)
//	control   a pod in the sandboxes' namespace that no policy selects: it must
//	          reach everything a sandbox is refused, or a refusal would prove
//	          nothing
//	router    app=sandbox-router in agent-sandbox-system (the default ingress peer)
//	stranger  an unlabelled pod in agent-sandbox-system
//	impostor  app=sandbox-router in the sandboxes' namespace
//
// Step 1 is the first apply; step 2 is the same policy updated in place to
// allow nothing (no allow_dns, no allow_egress, ingress = []).

// Verdict is the expected outcome of a probe.
type Verdict string

const (
	Reachable Verdict = "reachable"
	Refused   Verdict = "refused"
)

// Protocols of a probe.
const (
	// ProtoHTTP: TCP connect and an HTTP GET whose answer must name the
	// destination (so that reaching something else does not count).
	ProtoHTTP = "http"
	// ProtoDNSUDP and ProtoDNSTCP: an A query for DNSName, answered with
	// AllowedIP by the DNS stand-in.
	ProtoDNSUDP = "dns-udp"
	ProtoDNSTCP = "dns-tcp"
)

// Probe is one network check.
type Probe struct {
	Step  int     // 1 or 2 (see above)
	Check string  // the subtest of TestE2E that runs it
	From  string  // role of the pod that connects
	To    string  // an address, or the role of a pod (ingress)
	Port  int     // destination port
	Proto string  // ProtoHTTP, ProtoDNSUDP or ProtoDNSTCP
	Want  Verdict // expected verdict
	Claim string  // the documented claim the probe checks
}

// Target is the probe's destination as the prober prints it.
func (p Probe) Target() string { return fmt.Sprintf("%s://%s:%d", p.Proto, p.To, p.Port) }

// Addresses of the test's own "outside" network namespace.
const (
	AllowedIP   = "198.19.0.10"     // in allow_egress 198.19.0.0/28 (ports 80)
	ExceptIP    = "198.19.0.12"     // in allow_egress 198.19.0.0/28, but in its except list
	DeniedIP    = "198.19.0.20"     // in no allowed range of the allow-list policy
	LinkLocalIP = "169.254.169.1"   // in allow_egress 169.254.0.0/16 (ports 80)
	MetadataIP  = "169.254.169.254" // the stand-in metadata server
	DNSIP       = "169.254.20.10"   // the pods' nameserver (NodeLocal DNSCache's address)
	PublicIP    = "203.0.113.10"    // "the internet" (TEST-NET-3): in no private range
	Private10   = "10.10.0.10"      // 10.0.0.0/8
	Private172  = "172.16.0.10"     // 172.16.0.0/12
	Private192  = "192.168.0.10"    // 192.168.0.0/16
	DNSName     = "allowed.e2e.test."
	// AgentPort is the sandboxes' agent port (the default ingress rule's
	// port); OtherPort is a second port every pod and server also serves.
	AgentPort = 8888
	OtherPort = 9999
	HTTPPort  = 80
	AltPort   = 8080
)

// AllowListEgress is the allow_egress of the "sandbox" policy in step 1.
var AllowListEgress = []struct {
	CIDR   string
	Except []string
	Port   int
}{
	{CIDR: "198.19.0.0/28", Except: []string{ExceptIP + "/32"}, Port: HTTPPort},
	{CIDR: "169.254.0.0/16", Port: HTTPPort},
}

// OutsideServers are the HTTP servers of the outside namespace: every
// address serves both ports.
var OutsideServers = []string{AllowedIP, ExceptIP, DeniedIP, LinkLocalIP, MetadataIP, PublicIP, Private10, Private172, Private192}

// Probes is the list TestE2E runs.
var Probes = buildProbes()

func buildProbes() []Probe {
	var ps []Probe
	add := func(step int, check, from, to string, port int, proto string, want Verdict, claim string) {
		ps = append(ps, Probe{Step: step, Check: check, From: from, To: to, Port: port, Proto: proto, Want: want, Claim: claim})
	}
	http := func(step int, check, from, to string, port int, want Verdict, claim string) {
		add(step, check, from, to, port, ProtoHTTP, want, claim)
	}
	const (
		egress   = "egress"
		internet = "egress_internet"
		ingress  = "ingress"
		deny     = "default_deny"
	)

	// Step 1, the allow-list policy.
	http(1, egress, "sandbox", AllowedIP, HTTPPort, Reachable, "allow_egress: an allowed range is reachable on its ports")
	http(1, egress, "sandbox", AllowedIP, AltPort, Refused, "allow_egress: only on the entry's ports")
	http(1, egress, "sandbox", ExceptIP, HTTPPort, Refused, "allow_egress: not the entry's except ranges")
	http(1, egress, "sandbox", DeniedIP, HTTPPort, Refused, "egress is denied unless allowed: outside the allow-list")
	http(1, egress, "sandbox", PublicIP, HTTPPort, Refused, "egress is denied unless allowed: no internet without allow_internet")
	http(1, egress, "sandbox", LinkLocalIP, HTTPPort, Reachable, "allow_egress: an allowed link-local range is reachable")
	http(1, egress, "sandbox", MetadataIP, HTTPPort, Refused, "block_metadata_server: the metadata server is carved out of every allowed range containing it")
	add(1, egress, "sandbox", DNSIP, 53, ProtoDNSUDP, Reachable, "allow_dns: cluster DNS on UDP 53")
	add(1, egress, "sandbox", DNSIP, 53, ProtoDNSTCP, Reachable, "allow_dns: cluster DNS on TCP 53")

	// Step 1, allow_internet alone.
	http(1, internet, "internet", PublicIP, HTTPPort, Reachable, "allow_internet: public addresses are reachable")
	http(1, internet, "internet", PublicIP, AltPort, Reachable, "allow_internet: on every port")
	http(1, internet, "internet", Private10, HTTPPort, Refused, "allow_internet: not 10.0.0.0/8")
	http(1, internet, "internet", Private172, HTTPPort, Refused, "allow_internet: not 172.16.0.0/12")
	http(1, internet, "internet", Private192, HTTPPort, Refused, "allow_internet: not 192.168.0.0/16")
	http(1, internet, "internet", LinkLocalIP, HTTPPort, Refused, "allow_internet: not 169.254.0.0/16")
	http(1, internet, "internet", MetadataIP, HTTPPort, Refused, "allow_internet: not the metadata server")
	add(1, internet, "internet", DNSIP, 53, ProtoDNSUDP, Refused, "allow_dns is off by default: no cluster DNS")

	// Step 1, a "Managed" template without network_policy: the
	// controller's default (sandbox template docs, "Network isolation").
	const managed = "managed_default"
	http(1, managed, "managed", PublicIP, HTTPPort, Reachable, "Managed default: egress to the public internet")
	http(1, managed, "managed", PublicIP, AltPort, Reachable, "Managed default: egress to the public internet on every port")
	http(1, managed, "managed", Private10, HTTPPort, Refused, "Managed default: private addresses blocked")
	http(1, managed, "managed", Private172, HTTPPort, Refused, "Managed default: private addresses blocked")
	http(1, managed, "managed", Private192, HTTPPort, Refused, "Managed default: private addresses blocked")
	http(1, managed, "managed", MetadataIP, HTTPPort, Refused, "Managed default: link-local addresses (the metadata server) blocked")
	add(1, managed, "managed", DNSIP, 53, ProtoDNSUDP, Refused, "Managed default: cluster DNS blocked")
	http(1, managed, "router", "managed", AgentPort, Reachable, "Managed default: ingress from the sandbox router")
	http(1, managed, "router", "managed", OtherPort, Reachable, "Managed default: ingress from the sandbox router on every port")
	http(1, managed, "stranger", "managed", AgentPort, Refused, "Managed default: ingress only from the sandbox router")
	http(1, managed, "impostor", "managed", AgentPort, Refused, "Managed default: ingress only from the router's namespace")

	// Step 1, ingress: the default rule admits the router, on the agent port only.
	http(1, ingress, "router", "sandbox", AgentPort, Reachable, "ingress default: the router pod in the router namespace, on 8888")
	http(1, ingress, "router", "sandbox", OtherPort, Refused, "ingress default: on 8888 only")
	http(1, ingress, "stranger", "sandbox", AgentPort, Refused, "ingress default: not other pods of the router namespace")
	http(1, ingress, "impostor", "sandbox", AgentPort, Refused, "ingress default: not router-labelled pods of other namespaces")
	http(1, ingress, "router", "internet", AgentPort, Reachable, "ingress default: the router reaches every policy's sandboxes")
	http(1, ingress, "stranger", "internet", AgentPort, Refused, "ingress default: applies with allow_internet too")

	// Step 2, after the in-place update: nothing in, nothing out.
	for _, p := range ps {
		if p.Step == 1 && p.From == "sandbox" {
			q := p
			q.Step, q.Check, q.Want = 2, deny, Refused
			q.Claim = "default deny after an in-place update: " + p.Claim
			ps = append(ps, q)
		}
	}
	http(2, deny, "router", "sandbox", AgentPort, Refused, "ingress = []: no ingress, not even the router")

	// The control: the unselected pod reaches every destination some
	// sandbox is refused (and the allowed ones), in both steps; and
	// ingress it does not refuse.
	seen := map[string]bool{}
	for _, p := range append([]Probe(nil), ps...) {
		if p.Check == ingress || p.Check == deny && p.From != "sandbox" || !isAddr(p.To) {
			continue
		}
		key := fmt.Sprintf("%d %s", p.Step, p.Target())
		if seen[key] {
			continue
		}
		seen[key] = true
		add(p.Step, "control", "control", p.To, p.Port, p.Proto, Reachable, "control: a pod no policy selects reaches it (the refusals are the policy's)")
	}
	for step := 1; step <= 2; step++ {
		for _, from := range []string{"router", "stranger", "impostor"} {
			for _, port := range []int{AgentPort, OtherPort} {
				http(step, "control", from, "control", port, Reachable, "control: an unselected pod admits every source on every port")
			}
		}
	}
	return ps
}

// isAddr reports whether a probe's destination is an address (not a pod role).
func isAddr(to string) bool { return strings.Contains(to, ".") }
