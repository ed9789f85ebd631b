package sandboxsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1ac "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/crds"
)

// The cluster tests share one environment per test binary: a client, the CRDs
// and one in-process stand-in started through Run with leader election on. If
// the acctest harness (or anyone else) already runs an instance against the
// same cluster, ours stays a follower and theirs does the work; the tests
// cannot tell the difference and must not need to.
type testEnv struct {
	cfg    *rest.Config
	client client.Client
}

var (
	// testLogger is the zero logr.Logger (Run's quiet default) unless
	// SANDBOXSIM_TEST_LOG is set.
	testLogger logr.Logger
	env        *testEnv
	envErr     error  // set when a cluster was configured but is unusable
	envSkip    string // set when no usable cluster was configured
	stopShared func()
)

const kubeconfigHelp = "set KUBECONFIG or AGENTSANDBOX_TEST_KUBECONFIG to a local test cluster, e.g. " +
	"`go run ./internal/testing/testenv/cmd/testenv -- go test ./internal/testing/sandboxsim/...`"

func TestMain(m *testing.M) {
	env, envSkip, envErr = setupEnv()
	code := m.Run()
	if stopShared != nil {
		stopShared()
	}
	os.Exit(code)
}

// requireCluster skips (no cluster configured) or fails (cluster unusable)
// the calling test, and otherwise returns the shared environment.
func requireCluster(t *testing.T) *testEnv {
	t.Helper()
	switch {
	case envErr != nil:
		t.Fatalf("cluster test environment: %v", envErr)
	case env == nil:
		t.Skip(envSkip)
	}
	return env
}

func setupEnv() (*testEnv, string, error) {
	path := os.Getenv("AGENTSANDBOX_TEST_KUBECONFIG")
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path == "" {
		return nil, "no cluster: " + kubeconfigHelp, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	// These tests create and delete objects and run a controller; they are
	// meant for a throwaway local cluster, never a shared one.
	if !isLoopback(cfg.Host) {
		return nil, fmt.Sprintf("kubeconfig %s points at %s, not a loopback address; %s", path, cfg.Host, kubeconfigHelp), nil
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, "", err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Two controllers reconciling the same objects would make every test
	// meaningless.
	var upstream metav1.PartialObjectMetadata
	upstream.SetGroupVersionKind(appsDeploymentGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: "agent-sandbox-system", Name: "agent-sandbox-controller"}, &upstream); err == nil {
		return nil, "the real agent-sandbox controller is installed in this cluster; the stand-in must not run beside it", nil
	} else if !apierrors.IsNotFound(err) && !isNoMatch(err) {
		return nil, "", fmt.Errorf("checking for the upstream controller at %s: %w", cfg.Host, err)
	}

	if err := installCRDs(ctx, c); err != nil {
		return nil, "", err
	}

	// The shared instance. Its logs are kept out of test output unless asked
	// for with SANDBOXSIM_TEST_LOG=1.
	if os.Getenv("SANDBOXSIM_TEST_LOG") != "" {
		testLogger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
	}
	opts := Options{Logger: testLogger}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(runCtx, cfg, opts) }()
	stopShared = func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, "sandboxsim shared instance:", err)
			}
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "sandboxsim shared instance did not stop within 30s")
		}
	}
	return &testEnv{cfg: cfg, client: c}, "", nil
}

var appsDeploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

func isNoMatch(err error) bool {
	return strings.Contains(err.Error(), "no matches for kind")
}

func isLoopback(host string) bool {
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// installCRDs creates, by server-side apply, whichever agent-sandbox CRDs the
// cluster lacks (the harness normally installed them already) and waits until
// all four are Established.
func installCRDs(ctx context.Context, c client.Client) error {
	want, err := crds.V1beta1()
	if err != nil {
		return err
	}
	for _, crd := range want {
		var have apiextensionsv1.CustomResourceDefinition
		err := c.Get(ctx, types.NamespacedName{Name: crd.Name}, &have)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading CRD %s: %w", crd.Name, err)
		}
		// Apply configurations share the API types' JSON, so a round trip
		// turns the typed CRD into one.
		raw, err := json.Marshal(crd)
		if err != nil {
			return err
		}
		ac := &apiextensionsv1ac.CustomResourceDefinitionApplyConfiguration{}
		if err := json.Unmarshal(raw, ac); err != nil {
			return err
		}
		ac.WithAPIVersion(apiextensionsv1.SchemeGroupVersion.String()).WithKind("CustomResourceDefinition")
		if err := c.Apply(ctx, ac, client.FieldOwner("sandboxsim-tests"), client.ForceOwnership); err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, crd := range want {
		for {
			var have apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, types.NamespacedName{Name: crd.Name}, &have); err == nil && crdEstablished(&have) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established within a minute", crd.Name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespace creates a namespace for one test and deletes it afterwards (the
// deletion is not awaited: the namespace controller finishes it on its own).
func (e *testEnv) namespace(t *testing.T) string {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	base := nonDNS.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	name := "sbsim-" + strings.Trim(base, "-") + "-" + hex.EncodeToString(suffix)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelManagedBy: "sandboxsim-tests"}}}
	if err := e.client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		if os.Getenv("SANDBOXSIM_TEST_KEEP") != "" {
			return
		}
		_ = e.client.Delete(context.Background(), ns)
	})
	return name
}

// eventually polls cond every interval until it reports done or timeout
// passes; the test then fails with cond's last explanation.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	eventuallyEvery(t, timeout, 100*time.Millisecond, what, cond)
}

func eventuallyEvery(t *testing.T, timeout, interval time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, timeout, last)
		}
		time.Sleep(interval)
	}
}

// get reads obj by key into obj and fails the test on any error but NotFound,
// which it reports as false.
func (e *testEnv) get(t *testing.T, ns, name string, obj client.Object) bool {
	t.Helper()
	err := e.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("reading %T %s/%s: %v", obj, ns, name, err)
	}
	return true
}

func (e *testEnv) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// update re-reads obj, applies mutate and writes it back, retrying on
// conflicts with the controller's own writes.
func (e *testEnv) update(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	for i := 0; ; i++ {
		if err := e.client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatalf("reading %T %s: %v", obj, obj.GetName(), err)
		}
		mutate()
		err := e.client.Update(context.Background(), obj)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i == 10 {
			t.Fatalf("updating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// gone reports whether obj no longer exists or is being deleted.
func (e *testEnv) gone(t *testing.T, ns, name string, obj client.Object) bool {
	t.Helper()
	return !e.get(t, ns, name, obj) || !obj.GetDeletionTimestamp().IsZero()
}

func describeConditions(conds []metav1.Condition) string {
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// rawMergePatch sends a JSON merge patch as written.
func rawMergePatch(data []byte) client.Patch { return client.RawPatch(types.MergePatchType, data) }
