// Package testenv starts and stops the environment the acceptance tests run
// against: a Kubernetes API server (the local control plane from
// internal/devenv/localcluster, or a cluster the caller names), the CRDs of an
// upstream agent-sandbox release as the release ships them, and that
// release's own controller (upstream's cmd/agent-sandbox-controller, built
// from the Go module proxy by internal/devenv/realcontroller and run out of
// cluster; RealController).
//
// It is the one mechanism behind both entry points: the testenv command that
// `make test` wraps around `go test ./...`, and acctest.Main, which lets
// `TF_ACC=1 go test ./internal/foo/` bring up an environment for a single
// package. Neither path has logic of its own beyond running a command or
// testing.M.
//
// A run never leaves processes behind silently. Every process it starts
// carries an environment marker (MarkerVar=<run id>) that its descendants
// inherit, and every cluster component names the run directory on its
// command line; after teardown /proc is scanned for both, and anything
// found is killed and reported as an error. A watchdog process, started
// before the cluster, tears the cluster down if the harness itself dies
// without doing so (a test binary killed by `go test -timeout`, SIGKILL).
//
// Environment variables read (see OptionsFromEnv):
//
//	AGENTSANDBOX_TEST_KUBECONFIG, KUBECONFIG  use this cluster instead of starting one
//	AGENTSANDBOX_LOCALCLUSTER_BIN             the localcluster binary (else build.sh builds it)
//	AGENTSANDBOX_TEST_RELEASE                 the release to run (v0.5.0 ... v1.0.3; default the newest)
//	AGENTSANDBOX_TEST_NO_CONTROLLER=1         do not run the release's controller
//	AGENTSANDBOX_TEST_NO_CRDS=1               do not install the CRDs (e.g. the real controller owns them)
//	AGENTSANDBOX_TEST_KEEP=1                  keep the run directory (logs, etcd data) after teardown
//
// and set for the command / test binary:
//
//	KUBECONFIG, AGENTSANDBOX_TEST_KUBECONFIG  the cluster's kubeconfig
//	AGENTSANDBOX_TESTENV_RUN                  the run id; its presence means "an environment is already running"
package testenv
