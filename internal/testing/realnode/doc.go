// Package e2e is the end-to-end acceptance run (`make testacc-e2e`): the
// provider's own resources applied to a local cluster with a real node
// (`localcluster up --real-node`), whose sandbox pods run for real in gVisor
// and whose NetworkPolicies are really enforced (kube-network-policies). The
// tests check, from inside the sandboxes, the security claims the template
// and network-policy resources make:
//
//	TestE2E_SandboxIsolation        gVisor kernel, non-root, no capabilities,
//	                                no privilege escalation, no service-account token
//	TestE2E_NetworkPolicyEgress     egress outside the allow-list and to the metadata
//	                                server fails (even inside an allowed range); allowed
//	                                destinations and DNS work; a pod the policy does not
//	                                select reaches all of them (the control)
//	TestE2E_NetworkPolicyIngress    ingress only from the router-labelled pod in the
//	                                router's namespace
//
// Everything stays on this machine: the pods live in the real node's network
// namespace, and the "outside world" (test servers, a stand-in metadata server
// at 169.254.169.254, a DNS stand-in) is a network namespace of a helper
// process the test starts and connects to the node with one veth pair. After
// the run, the harness checks that nothing it started survives: processes,
// mounts, network namespaces, nftables tables, links, cgroups.
//
// It runs only with AGENTSANDBOX_E2E=1 and skips, saying why, on machines that
// cannot run the real node (not root, missing packages, kernel features). The
// tests are in _test.go files; this file only documents the package.
package realnode
