// Package realnode is the end-to-end acceptance run (`make testacc-e2e`):
// the provider's own resources applied to a local cluster with a real node
// (`localcluster up --real-node`), whose sandbox pods run for real in gVisor
// and whose NetworkPolicies are really enforced (kube-router's network
// policy controller, unmodified, iptables and ipsets in the node's network
// namespace). The tests check, from inside the sandboxes, the security
// claims the template and network-policy resources make:
//
//	TestE2E/sandbox_isolation  gVisor kernel, non-root, no capabilities, no
//	                           privilege escalation, no service-account token
//	TestE2E/egress             the allow-list policy: allowed range and port,
//	                           not other ports, not except ranges, nothing else,
//	                           the metadata server refused inside an allowed range,
//	                           DNS (UDP and TCP) with allow_dns
//	TestE2E/egress_internet    allow_internet: public addresses on every port, no
//	                           private or link-local range, no metadata, no DNS
//	TestE2E/ingress            only the router pod of the router namespace, only
//	                           on the agent port
//	TestE2E/default_deny       after an in-place update to allow nothing, the
//	                           same sandbox reaches nothing and admits no one
//	TestE2E/control            a pod no policy selects reaches every destination
//	                           a sandbox is refused, and admits every source
//	TestE2E/report             data.agentsandbox_isolation_report, read again
//	                           after each step's probes, gives every probe that
//	                           starts or ends at a sandbox the verdict the
//	                           packet got (the control pod is no sandbox: the
//	                           report has nothing to say about its probes)
//
// The probes are data (Probes in probes.go: step, source, destination,
// port, protocol, expected verdict, claim), and their results are written
// as JSON (ResultsVar) for other checks to compare against.
//
// Everything stays on this machine: the pods live in the real node's network
// namespace, and the "outside world" (test servers, a stand-in metadata server
// at 169.254.169.254, a DNS stand-in) is a network namespace of a helper
// process the test starts and connects to the node with one veth pair. After
// the run, the harness checks that nothing it started survives: processes,
// mounts, network namespaces (the node's with the enforcer's rules and
// sets), links, cgroups, and that the host's iptables, ipsets and nftables
// rule set are unchanged.
//
// It runs only with AGENTSANDBOX_E2E=1, and then it fails, saying why, on a
// machine that cannot run the real node (not root, missing packages, kernel
// features): a skipped security check proves nothing. Without the variable
// only the unit tests of the probe list run.
package realnode
