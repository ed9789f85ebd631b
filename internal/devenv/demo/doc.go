// Package demo is the local stand-in for "a GKE project with a cluster"
// that `make demo` and the examples' acceptance tests (internal/testing/exampletest)
// run the example configurations against, entirely on 127.0.0.1:
//
//   - the local control plane and upstream's own agent-sandbox controller
//     of the newest release (built from the Go module proxy, run out of
//     cluster), started by internal/testing/testenv (the same mechanism as
//     the acceptance tests), without the harness's CRDs: the configuration
//     under test installs them with agentsandbox_controller, and the
//     controller starts once they are served;
//   - the GKE container/v1 emulator (internal/testing/gkeemu) with one Standard
//     cluster whose endpoint and CA are the local control plane's, so
//     that `kubernetes { gke_cluster = ... }` derives working Kubernetes
//     credentials from it; the emulator accepts only the local cluster's
//     static admin token, which thereby plays the Google access token;
//   - a release server mimicking upstream's download layout,
//     <base>/<tag>/<asset>, that serves the offline bundles of
//     internal/sandboxapi/bundles (the air-gapped install path:
//     release_base_url pointing at a mirror).
//
// None of it is GKE or the upstream controller, and Describe says so in
// words a demo prints. The package owns no mechanism of its own beyond
// wiring these together and serving the bundles.
package demo
