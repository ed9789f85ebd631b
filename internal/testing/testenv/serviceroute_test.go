package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestServiceRoute_ConnectsOnlyTheTarget checks the CONNECT handling alone:
// the target is spliced to the backend (bytes sent right after the CONNECT
// included), anything else gets 502.
func TestServiceRoute_ConnectsOnlyTheTarget(t *testing.T) {
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }() // echo
		}
	}()
	sock := filepath.Join(t.TempDir(), "egress.sock")
	r, err := startServiceRoute(sock, "10.0.0.7:443", backend.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(sock); !os.IsNotExist(err) {
			t.Errorf("socket left behind: %v", err)
		}
	}()

	connect := func(target, extra string) (*http.Response, net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%s", target, target, extra)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatal(err)
		}
		return resp, c, br
	}

	resp, c, br := connect("10.0.0.7:443", "early ")
	_ = resp.Body.Close() // a CONNECT answer has no body; the connection goes on
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT to the target: %s", resp.Status)
	}
	fmt.Fprint(c, "late\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "early late\n" {
		t.Errorf("echo through the route: %q, %v", line, err)
	}
	c.Close()
	if n := r.connections(); n != 1 {
		t.Errorf("routed %d connections, want 1", n)
	}

	for _, other := range []string{"10.0.0.8:443", "10.0.0.7:80", "127.0.0.1:10250"} {
		resp, c, _ := connect(other, "")
		_ = resp.Body.Close()
		c.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("CONNECT %s: %s, want 502", other, resp.Status)
		}
	}
}

// TestServiceRoute_APIServerConvertsThroughTheReleaseService runs inside an
// environment of a v0.5.x release on the local cluster (make
// testacc-releases): the CRDs name their conversion webhook by the release's
// Service, and a v1beta1 Sandbox read as v1alpha1 comes back converted, so
// the API server reached the release controller's own webhook through that
// Service, with the CA the controller patched into the CRD.
func TestServiceRoute_APIServerConvertsThroughTheReleaseService(t *testing.T) {
	if os.Getenv("TF_ACC") == "" || !Managed() {
		t.Skip("acceptance test: runs inside a testenv environment (make test) with TF_ACC=1")
	}
	p, err := ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !p.ServesV1alpha1 {
		t.Skipf("agent-sandbox %s serves no v1alpha1, so there is no conversion webhook", p.Name)
	}
	kc, err := GivenKubeconfig()
	if err != nil || kc == "" {
		t.Fatalf("no kubeconfig inside the environment: %q %v", kc, err)
	}
	cfg, err := RESTConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := dyn.Resource(CRDGVR).Get(ctx, "sandboxes.agents.x-k8s.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service")
	if url, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "url"); url != "" {
		// A cluster the caller named: the harness names its URL there.
		t.Skipf("the CRD names the webhook by URL (%s): not the local cluster", url)
	}
	want := webhookService
	if svc["namespace"] != want.Namespace || svc["name"] != want.Name || svc["path"] != "/convert" {
		t.Fatalf("CRD conversion webhook service = %v, want %+v", svc, want)
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := "route-" + strings.ToLower(fmt.Sprintf("%x", time.Now().UnixNano()))[:12]
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}) })

	beta := schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}
	alpha := beta
	alpha.Version = "v1alpha1"
	sb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
		"metadata": map[string]any{"name": "converted", "namespace": ns},
		"spec": map[string]any{
			"operatingMode": "Suspended",
			"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "c", "image": "registry.k8s.io/pause:3.10"},
			}}},
		},
	}}
	if _, err := dyn.Resource(beta).Namespace(ns).Create(ctx, sb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(alpha).Namespace(ns).Get(ctx, "converted", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the Sandbox as v1alpha1 (the API server calls the webhook through Service %s/%s): %v",
			want.Namespace, want.Name, err)
	}
	if r, found, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); !found || r != 0 {
		t.Errorf("v1alpha1 spec.replicas = %d (found %v), want 0 for a Suspended sandbox", r, found)
	}
}
