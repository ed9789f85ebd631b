package acctest

import (
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// clients are built once per test binary: every test talks to the same
// cluster, and building a client per call would dominate short checks.
type clientSet struct {
	kubeconfig string
	cfg        *rest.Config
	dyn        dynamic.Interface
	typed      kubernetes.Interface
}

var (
	clientsMu sync.Mutex
	clients   *clientSet
)

// getClients returns the shared clients for the current test kubeconfig.
// It is keyed by the path so that a test setting AGENTSANDBOX_TEST_KUBECONFIG
// (to check the harness against another cluster) is not served a stale one.
func getClients() (*clientSet, error) {
	kc, err := testenv.GivenKubeconfig()
	if err != nil {
		return nil, err
	}
	if kc == "" {
		return nil, errors.New("no test cluster (KUBECONFIG / AGENTSANDBOX_TEST_KUBECONFIG unset)")
	}
	clientsMu.Lock()
	defer clientsMu.Unlock()
	if clients != nil && clients.kubeconfig == kc {
		return clients, nil
	}
	cfg, err := testenv.RESTConfig(kc)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "agentsandbox-acctest"
	// client-go's default limit (5 requests/s) throttles the tests' own
	// polling until a wait fails with "rate limiter Wait ... would exceed
	// context deadline" instead of reporting what it saw; the local test
	// cluster needs no protection from its own tests.
	cfg.QPS, cfg.Burst = 200, 400
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	typed, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	clients = &clientSet{kubeconfig: kc, cfg: cfg, dyn: dyn, typed: typed}
	return clients, nil
}

func mustClients(t testing.TB) *clientSet {
	t.Helper()
	requireCluster(t)
	c, err := getClients()
	if err != nil {
		t.Fatalf("test cluster clients: %v", err)
	}
	return c
}

// RESTConfig returns a copy of the test cluster's client configuration. It
// skips t without TF_ACC and fails it without a cluster, as do Dynamic,
// Clientset and Namespace.
func RESTConfig(t testing.TB) *rest.Config {
	t.Helper()
	return rest.CopyConfig(mustClients(t).cfg)
}

// Dynamic returns the shared dynamic client of the test cluster.
func Dynamic(t testing.TB) dynamic.Interface {
	t.Helper()
	return mustClients(t).dyn
}

// Clientset returns the shared typed client of the test cluster.
func Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	return mustClients(t).typed
}

// NamespaceLabel marks namespaces made by Namespace, so leftovers of an
// aborted run against a long-lived cluster can be found and removed with
// `kubectl delete ns -l agentsandbox.dev/acctest=true`.
const NamespaceLabel = "agentsandbox.dev/acctest"

// Namespace creates a namespace unique to t (named after the test) and
// deletes it when t ends. Tests that create namespaced objects should use
// one each: tests in different packages run against one cluster at once,
// and a namespace keeps them from seeing each other's objects.
//
// Deletion is not awaited: the namespace controller finishes it in the
// background, and nothing later in the run depends on it being gone.
func Namespace(t testing.TB) string {
	t.Helper()
	cs := Clientset(t)
	name := RandomName(t.Name())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{NamespaceLabel: "true"},
	}}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := cleanupContext()
		defer cancel()
		err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}
