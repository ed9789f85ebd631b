package controller_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_controller", "agentsandbox_sandbox_router"},
		Sources: []string{".", "../../tfvalues", "../../nestedattr"},
		Exempt: map[string]string{
			// Made while preparing the manifest, once it is read or
			// downloaded (plan and apply): the tests below give a real
			// source and run Terraform or prepare itself.
			"Manifest checksum mismatch":                 "TestAccController_wrongChecksumRefusedBeforeAnyRequest: needs the manifest's bytes",
			"Invalid agent-sandbox manifest":             "TestAccController_sourceErrorsNameTheSource: needs a served manifest",
			"Manifest with unresolved ko:// images":      "TestKoPlaceholderRefusedBeforeApply: needs the manifest's objects",
			"Cannot rewrite images":                      "TestPrepareRefusesWhatItCannotChange: needs the manifest's objects",
			"Cannot apply the controller settings":       "TestPrepareRefusesWhatItCannotChange: needs the manifest's objects",
			"Cannot configure the allowed label domains": "TestAccController_allowedLabelDomainsNeedTheMount: needs the manifest's objects",
			"Manifest changed since the plan":            "TestApplyRefusesAManifestChangedSincePlan: made at apply, when the source changed after the plan",
			"Prometheus Operator CRDs not installed":     "TestAccController_metricsObjects: needs a cluster's API, read at plan",
			"Cannot add the metrics objects":             "TestAddMetricsObjectsAsTheChart: needs the manifest's objects",
		}}.Check)
}

const (
	resourceAddr   = "agentsandbox_controller.test"
	controllerNS   = "agent-sandbox-system"
	controllerName = "agent-sandbox-controller"
	// controllerManager is the field manager upstream's controller writes
	// the CRDs' conversion caBundle with; the tests play its part.
	controllerManager = "agent-sandbox-controller"
)

var (
	crdGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	serviceGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	secretGVR     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	namespaceGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	roleGVR       = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	bindingGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	sandboxGVR    = schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}

	sandboxCRDs = []string{
		"sandboxes.agents.x-k8s.io",
		"sandboxclaims.extensions.agents.x-k8s.io",
		"sandboxtemplates.extensions.agents.x-k8s.io",
		"sandboxwarmpools.extensions.agents.x-k8s.io",
	}

	// The v0.5 conversion-webhook objects that an upgrade to v1.0 removes.
	webhookObjects = []acctest.ObjectRef{
		{GVR: serviceGVR, Namespace: controllerNS, Name: "agent-sandbox-webhook-service"},
		{GVR: secretGVR, Namespace: controllerNS, Name: "agent-sandbox-webhook-certs"},
		{GVR: roleGVR, Namespace: controllerNS, Name: controllerName},
		{GVR: bindingGVR, Namespace: controllerNS, Name: controllerName},
	}
	controllerDeployment = acctest.ObjectRef{GVR: deploymentGVR, Namespace: controllerNS, Name: controllerName}

	// Inventory keys of the controller's Deployment and metrics Service.
	deploymentKey = "Deployment.apps/" + controllerNS + "/" + controllerName
	serviceKey    = "Service/" + controllerNS + "/" + controllerName
)

// releaseServer mimics upstream's release download layout on loopback,
// <base>/<tag>/<asset>, serving the offline bundles, plus extra paths a
// test adds (a broken release, a mirror). It counts what it served.
type releaseServer struct {
	*httptest.Server
	mu     sync.Mutex
	extra  map[string][]byte
	served []string
}

func newReleaseServer(t *testing.T) *releaseServer {
	t.Helper()
	rs := &releaseServer{extra: map[string][]byte{}}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.served = append(rs.served, r.URL.Path)
		data, ok := rs.extra[r.URL.Path]
		rs.mu.Unlock()
		if !ok {
			version, asset, found := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			if !found {
				http.NotFound(w, r)
				return
			}
			var err error
			if data, err = bundles.Read(version, asset); err != nil {
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	}))
	t.Cleanup(rs.Close)
	return rs
}

// add serves data at path (e.g. "/v9.9.9/sandbox-with-extensions.yaml").
func (rs *releaseServer) add(path string, data []byte) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.extra[path] = data
}

// configRelease is the resource installing a release from the loopback
// server, with extra attribute lines.
func configRelease(base, version string, extra ...string) string {
	return acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version          = %[1]q
  release_base_url = %[2]q
%[3]s
}
`, version, base, strings.Join(extra, "\n")))
}

// mustGet reads an object, failing the check when it cannot.
func mustGet(ctx context.Context, ref acctest.ObjectRef) (*unstructured.Unstructured, error) {
	obj, err := acctest.GetObject(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", ref, err)
	}
	return obj, nil
}

// checkGone fails unless every ref is absent.
func checkGone(refs ...acctest.ObjectRef) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, ref := range refs {
			obj, err := acctest.GetObject(context.Background(), ref)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return fmt.Errorf("get %s: %w", ref, err)
			case obj.GetDeletionTimestamp() != nil:
			default:
				return fmt.Errorf("%s still exists", ref)
			}
		}
		return nil
	}
}

// checkExists fails unless every ref exists.
func checkExists(refs ...acctest.ObjectRef) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, ref := range refs {
			if _, err := mustGet(context.Background(), ref); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkCRDVersions checks every agent-sandbox CRD's served versions, its
// conversion strategy and its status.storedVersions.
func checkCRDVersions(served []string, strategy string, stored []string) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, name := range sandboxCRDs {
			crd, err := mustGet(context.Background(), acctest.ObjectRef{GVR: crdGVR, Name: name})
			if err != nil {
				return err
			}
			var got []string
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			for _, v := range versions {
				m := v.(map[string]any)
				if m["served"] == true {
					got = append(got, m["name"].(string))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, served) {
				return fmt.Errorf("CRD %s serves %v, want %v", name, got, served)
			}
			s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
			if s != strategy {
				return fmt.Errorf("CRD %s has conversion strategy %q, want %q", name, s, strategy)
			}
			if strategy != "Webhook" {
				if _, found, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook"); found {
					return fmt.Errorf("CRD %s still has a conversion webhook", name)
				}
			}
			sv, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
			slices.Sort(sv)
			if !slices.Equal(sv, stored) {
				return fmt.Errorf("CRD %s has storedVersions %v, want %v", name, sv, stored)
			}
		}
		return nil
	}
}

// actAsV05Controller does at run time what upstream's v0.5 controller does
// and a release bundle does not: create the webhook certificate Secret and
// merge-patch the caBundle (and service) into every CRD's conversion
// webhook, with its own field manager.
func actAsV05Controller(t *testing.T) {
	t.Helper()
	cs := acctest.Clientset(t)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-sandbox-webhook-certs", Namespace: controllerNS},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": []byte("not a real certificate"), "tls.key": []byte("not a real key")},
	}
	_, err := cs.CoreV1().Secrets(controllerNS).Create(t.Context(), secret, metav1.CreateOptions{FieldManager: controllerManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the webhook certificate Secret as the controller would: %v", err)
	}
	caBundle := base64.StdEncoding.EncodeToString(selfSignedCA(t))
	patch := fmt.Sprintf(`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":%q,"service":{"name":"agent-sandbox-webhook-service","namespace":%q,"path":"/convert","port":443}}}}}}`,
		caBundle, controllerNS)
	for _, name := range sandboxCRDs {
		_, err := acctest.Dynamic(t).Resource(crdGVR).Patch(t.Context(), name, types.MergePatchType, []byte(patch),
			metav1.PatchOptions{FieldManager: controllerManager})
		if err != nil {
			t.Fatalf("patching the caBundle into CRD %s as the controller would: %v", name, err)
		}
	}
}

// selfSignedCA returns a fresh self-signed CA certificate, PEM: the API
// server checks that a conversion webhook's caBundle parses.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "agent-sandbox-webhook-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// markV1alpha1Stored makes every CRD's status.storedVersions list v1alpha1
// too, as on a cluster that ran a release storing v1alpha1 (before v0.5).
func markV1alpha1Stored(t *testing.T) {
	t.Helper()
	for _, name := range sandboxCRDs {
		_, err := acctest.Dynamic(t).Resource(crdGVR).Patch(t.Context(), name, types.MergePatchType,
			[]byte(`{"status":{"storedVersions":["v1alpha1","v1beta1"]}}`), metav1.PatchOptions{}, "status")
		if err != nil {
			t.Fatalf("setting storedVersions of %s: %v", name, err)
		}
	}
}

// createSandbox creates a Sandbox (v1beta1) in ns, to prove it survives
// an upgrade, and returns its UID.
func createSandbox(t *testing.T, ns, name string) types.UID {
	t.Helper()
	sb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1",
		"kind":       "Sandbox",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"podTemplate": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}},
			}},
		},
	}}
	out, err := acctest.Dynamic(t).Resource(sandboxGVR).Namespace(ns).Create(t.Context(), sb, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Sandbox %s/%s: %v", ns, name, err)
	}
	return out.GetUID()
}

// checkSandboxSurvived checks the Sandbox is still the same object.
func checkSandboxSurvived(ns, name string, uid *types.UID) func(*terraform.State) error {
	return func(*terraform.State) error {
		if *uid == "" {
			return nil // the test failed before creating it
		}
		obj, err := mustGet(context.Background(), acctest.ObjectRef{GVR: sandboxGVR, Namespace: ns, Name: name})
		if err != nil {
			return fmt.Errorf("the Sandbox did not survive: %w", err)
		}
		if obj.GetUID() != *uid {
			return fmt.Errorf("Sandbox %s/%s was recreated (uid %s, was %s)", ns, name, obj.GetUID(), *uid)
		}
		return nil
	}
}

// writeRequests returns the provider's Kubernetes requests other than
// reads (the provider runs in this process, so its counters are ours).
func writeRequests() map[string]int64 {
	out := map[string]int64{}
	for k, n := range kube.RequestCounts() {
		if !strings.HasPrefix(k, "GET ") && !strings.HasPrefix(k, "WATCH ") {
			out[k] = n
		}
	}
	return out
}

// deploymentImage is the image of the controller Deployment's container.
func deploymentImage(ctx context.Context) (string, error) {
	obj, err := mustGet(ctx, controllerDeployment)
	if err != nil {
		return "", err
	}
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return "", fmt.Errorf("%s has no containers", controllerDeployment)
	}
	img, _ := containers[0].(map[string]any)["image"].(string)
	return img, nil
}

// checkImage checks the controller Deployment's image.
func checkImage(want string) func(*terraform.State) error {
	return func(*terraform.State) error {
		got, err := deploymentImage(context.Background())
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("controller image = %q, want %q", got, want)
		}
		return nil
	}
}

// checkDeploymentAvailable checks that apply waited: the controller
// Deployment reports Available with every replica updated.
func checkDeploymentAvailable() func(*terraform.State) error {
	return func(*terraform.State) error {
		dep, err := mustGet(context.Background(), controllerDeployment)
		if err != nil {
			return err
		}
		ready, reason, err := kube.ObjectReady(dep)
		if err != nil {
			return fmt.Errorf("%s failed: %w", controllerDeployment, err)
		}
		if !ready {
			return fmt.Errorf("%s is not available after apply: %s", controllerDeployment, reason)
		}
		return nil
	}
}

// expectRefreshCost is a plan check on the requests the provider sent
// since the counters were reset: exactly perObject GETs of single objects,
// nothing else (no discovery, LIST, WATCH or write).
func expectRefreshCost(t *testing.T, objects int) plancheck.PlanCheck {
	return refreshCost{t: t, objects: objects}
}

type refreshCost struct {
	t       *testing.T
	objects int
}

func (c refreshCost) CheckPlan(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	counts := kube.RequestCounts()
	var total int64
	var other []string
	for k, n := range counts {
		total += n
		if !strings.HasPrefix(k, "GET ") || !strings.HasSuffix(k, "{name}") {
			other = append(other, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	c.t.Logf("refresh of %d inventory objects sent %d request(s): %v", c.objects, total, counts)
	switch {
	case len(other) > 0:
		resp.Error = fmt.Errorf("refresh sent requests other than single-object GETs: %v", other)
	case total != int64(c.objects):
		resp.Error = fmt.Errorf("refresh sent %d GETs for %d inventory objects, want one per object: %v", total, c.objects, counts)
	}
}
