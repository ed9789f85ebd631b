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
// TestE2ESDK is an agent's view of the same node, with upstream's own
// client, router and runtime of the release the provider models by default
// (v1.0.3), everything declared in one Terraform configuration: two teams'
// Python runtime templates (the release's examples/python-runtime-sandbox,
// in gVisor), warm pools and policies; a router per team with
// agentsandbox_sandbox_router (the release's sandbox-router/cmd, runc),
// team A's with authz_mode = "scoped-token", team B's with the resource's
// default authorization (TokenReview, token required); and both teams'
// isolation reports. The official Go SDK
// (sigs.k8s.io/agent-sandbox/clients/go/sandbox) in port-forward mode:
//
//	claim          the SDK gets the warm pool's sandbox
//	files          write and read a file (through the router, team A's token)
//	run            a command runs in gVisor (/proc/version, dmesg), uid 1000
//	router         team A's router refuses the SDK without a token (401) and
//	               with a token scoped to team B's sandbox (403); team B's,
//	               with the default authorization, a request without a token (401)
//	router_ingress no pod reaches either router's proxy port (no
//	               allowed_clients); the probe port answers (the control)
//	router_egress  team A's router, given valid scoped tokens, reaches team A's
//	               sandbox and not team B's
//	report         the reports say both routers require a token, and agree with
//	               the packets of router_ingress and router_egress
//	               (router.reachable_from, from_sandbox_router, a source)
//	egress         from the sandbox (SDK Run): the metadata server, the API server
//	               (the kubernetes Service's address) and team B's sandbox refused,
//	               the internet reachable (allow_internet); a control pod no
//	               policy selects reaches what the sandbox is refused
//	destroy        nothing of the teams is left, routers included
//
// Its verdicts are written beside the probes' (sdk.json). The SDK's
// sandboxd runtime is not used: it port-forwards to the sandbox pod itself,
// which containerd cannot do for a gVisor pod (sdk_test.go says why). The
// routers run without the Pod-IP cache (it must sync with the API server,
// which pods of this node cannot reach) and resolve sandboxes by cluster
// DNS, which the test's DNS stand-in answers from the sandboxes' pods
// (there is no CoreDNS on the node; dns_cidrs lets the routers query it).
// TestBenchClaims (scripts/bench-claims.sh, not in CI) measures warm and
// cold claims the same way.
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
