package acctest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// OwnCluster is a local cluster of one test's own, for a test that must
// control the agent-sandbox controller itself (which release runs, when it
// restarts and with what), which the package's shared cluster, whose
// controller every test uses, cannot give.
type OwnCluster struct {
	*testenv.Env
	// Dynamic reaches the cluster.
	Dynamic dynamic.Interface
	// Root is the repository checkout (for testenv.RealController).
	Root string
}

// StartOwnCluster starts a local cluster for t with opts (RepoRoot and the
// localcluster binary are filled in) and stops it when t ends. It skips the
// test when the run uses a cluster the caller named, where no local
// cluster can be started.
func StartOwnCluster(t *testing.T, opts testenv.Options) *OwnCluster {
	t.Helper()
	PreCheck(t)
	if kc, _ := testenv.GivenKubeconfig(); kc != "" && !testenv.Managed() {
		t.Skip("needs a local cluster of its own, which the local control plane gives (this run uses the cluster of " + kc + ")")
	}
	root, err := testenv.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	opts.RepoRoot = root
	if opts.LocalclusterBin == "" {
		opts.LocalclusterBin = os.Getenv(testenv.LocalclusterBinVar)
	}
	log := &syncBuilder{}
	opts.Log = log
	env, err := testenv.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting a cluster of the test's own: %v\n%s", err, log.String())
	}
	t.Cleanup(func() {
		if err := env.Stop(context.WithoutCancel(t.Context())); err != nil {
			t.Errorf("stopping the test's own cluster: %v", err)
		}
		t.Logf("the test's own environment:\n%s", log.String())
	})
	cfg, err := testenv.RESTConfig(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &OwnCluster{Env: env, Dynamic: dyn, Root: root}
}

// ProviderConfig is the provider block for the cluster.
func (c *OwnCluster) ProviderConfig() string { return providerConfig(c.Kubeconfig) }

// syncBuilder is a strings.Builder safe for the controller's goroutines.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
