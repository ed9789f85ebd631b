// Package gkeemu is an EMULATOR of the subset of Google Kubernetes Engine's
// container/v1 REST API that this provider calls. It is not GKE and never
// pretends to be: every answer carries the header "X-Gkeemu: emulator" and
// the command logs that it is an emulator.
//
// There is no public GKE emulator, so the provider's GKE resources are
// tested against this one. It aims to be faithful where a provider's
// correctness depends on it, so that a provider passing against it behaves
// right against GKE:
//
//   - the same URLs, methods, JSON shapes (the generated
//     google.golang.org/api/container/v1 types are used on both sides) and
//     error bodies ({"error":{"code","message","status","errors","details"}});
//   - long-running operations that go PENDING → RUNNING → DONE over
//     configurable durations, can be made to end in error, and whose effects
//     appear when GKE's would (a created pool exists in PROVISIONING at once
//     and is RUNNING when its operation is DONE; a deleted pool is STOPPING
//     until then);
//   - one operation at a time per cluster (FAILED_PRECONDITION with GKE's
//     "please wait and try again" wording), except node pool management
//     changes, which GKE documents as concurrent;
//   - GKE's rules for GKE Sandbox (gVisor) node pools, from "Harden workload
//     isolation with GKE Sandbox"
//     (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods)
//     and "GKE Sandbox" (concepts/sandbox-pods): sandboxConfig GVISOR
//     needs imageType COS_CONTAINERD; a Standard cluster must keep at least
//     one pool that is not a gVisor pool; taints with the key
//     sandbox.gke.io/runtime are GKE's own and refused from users; GKE adds
//     the label and the NoSchedule taint sandbox.gke.io/runtime=gvisor to
//     such pools itself and keeps them across label and taint updates.
//     MICROVM pools (a value of SandboxConfig.type in the published API
//     that no reachable GKE documentation describes) are stored as sent,
//     with none of these rules;
//   - 404 NOT_FOUND, 409 ALREADY_EXISTS, node pool etags (409 ABORTED on a
//     mismatch), node versions that must be offered and not newer than the
//     control plane, auto-upgrade that cannot be turned off on a release
//     channel, GKE_METADATA that needs Workload Identity, autoscaling limits;
//   - fault injection switchable per test: 429 with Retry-After, 503,
//     latency, connection resets before a request is served or after it
//     was (the change made, the answer lost), per API method and for a
//     number of requests.
//
// What it does not do: it starts no VMs (instanceGroupUrls are the strings
// GKE would return, nothing serves them), it does not report a node pool's
// current size (GKE's container API does not either; Server.NodePoolSize
// exposes the emulator's bookkeeping to tests), it implements only the
// methods listed in routes.go and answers UNIMPLEMENTED for fields of an
// update request it does not model, rather than ignoring them. Error
// messages follow GKE's wording where it is known and are otherwise
// plausible paraphrases.
//
// A cluster's endpoint and CA can point at a real local control plane
// (internal/devenv/localcluster), so that Kubernetes credentials derived from the
// emulated cluster reach a working API server.
//
// Use it in a test with httptest:
//
//	emu := gkeemu.New(gkeemu.Options{})
//	emu.AddCluster(gkeemu.ClusterSpec{Project: "p", Location: "us-central1", Name: "c"})
//	srv := httptest.NewServer(emu) // listens on 127.0.0.1
//	defer srv.Close()
//	svc, _ := container.NewService(ctx, option.WithEndpoint(srv.URL+"/"),
//		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "test"})))
//
// (GKE answers 401 without a bearer token, and so does the emulator; any
// token is accepted unless Options.AccessToken names one). Tests in this
// repository use package emutest, which also keeps every request on
// 127.0.0.1 and holds the emulator to GKE's published API (apidoc). Outside
// Go tests the emulator is held to it too, through a Guard: the demo stack
// (internal/devenv/demo, which the examples' tests use and fail on any
// departure) and the command internal/testing/gkeemu/cmd/gkeemu (on unless
// -api-check=false; each departure is logged). No test or demo talks to an
// unguarded emulator.
package gkeemu
