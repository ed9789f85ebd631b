// Package acctest is what every resource family's tests import: the
// provider factories for terraform-plugin-testing, the pre-check, a TestMain
// helper that brings up a test environment for a package run on its own,
// Kubernetes clients, helpers that read, delete and patch objects behind
// Terraform's back, HCL config builders, and the test-case scaffolding the
// families share (Family).
//
// The environment itself (local control plane, CRDs, the real controller,
// leak check) is package testenv; this package only decides when to start
// one and hands tests what they need to talk to it.
//
// A typical package:
//
//	func TestMain(m *testing.M) { acctest.Main(m) }
//
//	var fam = acctest.Family{ResourceType: warmpool.ResourceType, GVR: warmpool.Kind.GVR}
//
//	func TestAccWarmPool_basic(t *testing.T) {
//		ns := acctest.Namespace(t)
//		name := acctest.RandomName("pool")
//		resource.Test(t, fam.Case(t, resource.TestStep{
//			Config:           acctest.Config(testAccWarmPoolConfig_basic(ns, name)),
//			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
//		}))
//	}
//
// scaffold.go holds what the families' tests share beyond that: plan
// checks (Planned, DriftRepaired, ExpectBefore), live-object checks (Field,
// Mentions, Absent, OwnedBy), the request-cost steps (RequestCost), bad
// input through the CLI (RefusedAtPlan) and objects made behind the
// provider's back (CreateTemplate).
package acctest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// ProviderName is the provider's local name in test configurations.
const ProviderName = provider.TypeName

// ProtoV6ProviderFactories serves the provider in-process to the terraform
// CLI that terraform-plugin-testing runs. terraform-plugin-testing calls
// the factory each time a Terraform command starts the plugin, and each
// call builds a new provider and a new protocol server (which holds the
// configured clients), so no command sees another's state, as with a real
// plugin binary started per command. The process-wide request counters of
// package kube are shared, which is what the request-cost tests read.
//
// The fast path's switch (provider.FastPathVar) is read by each factory
// call, from this process's environment: AGENTSANDBOX_FASTPATH=off in the
// environment of `go test` gives every test a provider without the fast
// path (and FastPathEnv hands it on to the terraform commands tests run
// themselves).
var ProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	ProviderName: func() (tfprotov6.ProviderServer, error) {
		return provider.NewProtocol6WithError("test")()
	},
}

// envTfAcc is terraform-plugin-testing's switch for acceptance tests.
const envTfAcc = "TF_ACC"

// Main is a TestMain for packages with acceptance tests:
//
//	func TestMain(m *testing.M) { acctest.Main(m) }
//
// Under TF_ACC with no cluster in the environment (no KUBECONFIG or
// AGENTSANDBOX_TEST_KUBECONFIG) it starts one for this package alone, exactly
// as the testenv command would, and tears it down (with the leak check)
// after the tests. With a cluster given but no harness around (no
// AGENTSANDBOX_TESTENV_RUN), it installs the CRDs there and runs the
// release's real controller, again like the testenv command. Inside the testenv
// command, and without TF_ACC, it just runs the tests.
//
// after runs once the tests passed (say, protocoltest.Coverage.Check); an
// error it returns fails the package.
func Main(m *testing.M, after ...func() error) {
	// First: in the watchdog child of this test binary this never returns.
	testenv.RunWatchdogIfRequested()
	// A value of the fast path's switch the provider refuses would fail
	// every test one by one; say it once.
	on, err := provider.FastPath()
	if err != nil {
		fmt.Fprintf(os.Stderr, "acctest: %v\n", err)
		os.Exit(1)
	}
	if !on && os.Getenv(envTfAcc) != "" {
		fmt.Fprintf(os.Stderr, "acctest: %s=off: the provider under test has no fast path (every call is the framework's)\n", provider.FastPathVar)
	}
	code := runMain(m)
	for _, f := range after {
		if code != 0 {
			break
		}
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func runMain(m *testing.M) int {
	if os.Getenv(envTfAcc) == "" || testenv.Managed() {
		return m.Run()
	}
	// Parsing early is allowed (testing.Init has run) and lets `go test
	// -list` answer without a cluster.
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return m.Run()
	}

	opts, err := testenv.OptionsFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "acctest: %v\n", err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Start-up can take a while (cluster, or a cold build); a signal
		// aborts it, and Start then tears down what exists.
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acctest: cannot start the test environment: %v\n", err)
		return 1
	}
	for _, kv := range env.Vars() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	go func() {
		// A signal during the tests: tear down, then exit as the signal
		// would have. The tests are abandoned mid-way, which is what an
		// interrupt means.
		if s, ok := <-sigs; ok {
			fmt.Fprintf(os.Stderr, "acctest: %v: tearing down the test environment\n", s)
			if err := env.Stop(context.Background()); err != nil {
				fmt.Fprintf(os.Stderr, "acctest: teardown: %v\n", err)
			}
			code := 1
			if n, ok := s.(syscall.Signal); ok {
				code = 128 + int(n)
			}
			os.Exit(code)
		}
	}()
	code := m.Run()
	if err := env.Stop(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "acctest: FAILED teardown of the test environment: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// PreCheck is the TestCase.PreCheck of every acceptance test: it fails the
// test early, with a message saying what to do, when the run cannot work.
func PreCheck(t *testing.T) {
	t.Helper()
	requireCluster(t)
	PreCheckCLI(t)
}

// PreCheckCLI is the pre-check of acceptance tests that need no Kubernetes
// cluster (the GKE resources, against their emulator): it skips without
// TF_ACC and fails early without a terraform CLI.
func PreCheckCLI(t *testing.T) {
	t.Helper()
	SkipUnlessAcc(t)
	// terraform-plugin-testing would otherwise try to download a terraform
	// binary, which on these machines means a long hang and an opaque
	// error instead of a clear one.
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" && os.Getenv("TF_ACC_TERRAFORM_VERSION") == "" {
		if _, err := exec.LookPath("terraform"); err != nil {
			t.Fatal("terraform CLI not found: put terraform (or tofu) on PATH or set TF_ACC_TERRAFORM_PATH")
		}
	}
}

// SkipUnlessAcc skips t unless TF_ACC is set. Every helper that needs a
// cluster calls it, so plain `go test ./...` skips acceptance tests cleanly.
func SkipUnlessAcc(t testing.TB) {
	t.Helper()
	if os.Getenv(envTfAcc) == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it (make test provides a local cluster)")
	}
}

// Kubeconfig is the path of the test cluster's kubeconfig, "" if none.
func Kubeconfig() string {
	p, err := testenv.GivenKubeconfig()
	if err != nil {
		return ""
	}
	return p
}

// requireCluster skips without TF_ACC and fails without a cluster.
func requireCluster(t testing.TB) string {
	t.Helper()
	SkipUnlessAcc(t)
	p, err := testenv.GivenKubeconfig()
	if err != nil {
		t.Fatalf("test cluster: %v", err)
	}
	if p == "" {
		t.Fatal("TF_ACC is set but there is no test cluster: run `make test`, wrap the command in " +
			"`go run ./internal/testing/testenv/cmd/testenv --`, call acctest.Main from this package's TestMain, " +
			"or set KUBECONFIG / AGENTSANDBOX_TEST_KUBECONFIG")
	}
	return p
}

// FastPathEnv is the fast path's switch (provider.FastPathVar) as this
// process's environment sets it, as NAME=VALUE for the environment of a
// terraform command that starts a build of the provider (TFWork,
// exampletest), so that it runs as the in-process provider does; nil when
// the variable is not set.
func FastPathEnv() []string {
	if v, ok := os.LookupEnv(provider.FastPathVar); ok {
		return []string{provider.FastPathVar + "=" + v}
	}
	return nil
}
