package realnode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// The sandbox routers of TestE2ESDK and TestBenchClaims: upstream's Go
// router of the release under test (sandbox-router/cmd, built from the
// module's source by scripts/realnode-images.sh), installed by the
// provider's agentsandbox_sandbox_router in the same configuration as the
// teams' templates, pools and policies.
const (
	routerName        = "sandbox-router" // the Deployment, as upstream names it
	routerServiceName = "sandbox-router-svc"
	routerSecretName  = "sandbox-router-scoped-token"
	routerSecretKey   = "secret"
	routerProxyPort   = 8080
	routerProbePort   = 8081
	// realNodeLabel marks the real node (localcluster's
	// cluster.RealNodeLabel; its module is not this one), whose taint is
	// localcluster's gVisor pool's, sandbox.gke.io/runtime=gvisor:NoSchedule.
	realNodeLabel = "localcluster.agentsandbox.dev/real-node"
)

// routerImage is the image realnode-images.sh builds for release r.
func routerImage(r string) string { return "localhost/localcluster/sandbox-router:" + r }

// routerConfig declares a router in ns that reaches the sandboxes of ns on
// the runtime's port. authz is extra HCL for its authorization: empty
// keeps the resource's defaults (tokenreview, token required). The other
// attributes are what this node needs, each expressed with the resource:
//   - image: the one built from the release's source (nothing is pulled);
//     one replica (one node), so no PodDisruptionBudget;
//   - the node selector and the toleration of the real node's taint (the
//     router runs in runc there; the other nodes are kwok's);
//   - cache_enabled = false: the Pod-IP cache must sync with the API
//     server at start, and pods of the real node cannot reach it (no
//     kube-proxy), so the router resolves sandboxes by cluster DNS
//     (<sandbox>.<ns>.svc.cluster.local, proxy/resolve.go), answered by the
//     test's DNS stand-in;
//   - dns_cidrs: that stand-in listens at NodeLocal DNSCache's address,
//     which no namespace selector matches;
//   - proxy_timeout: a refused dial to a sandbox ends in 30 s, not 180.
func routerConfig(res, ns, authz string) string {
	return fmt.Sprintf(`
resource "agentsandbox_sandbox_router" %[1]q {
  namespace          = %[2]q
  image              = %[3]q
  image_pull_policy  = "Never"
  replicas           = 1
  pdb_min_available  = 0
  cache_enabled      = false
  proxy_timeout      = "30s"
  sandbox_namespaces = [%[2]q]
  sandbox_ports      = [%[4]d]
  dns_cidrs          = ["%[5]s/32"]
  node_selector      = { %[6]q = "true" }
  tolerations        = [{ key = %[7]q, operator = "Equal", value = %[8]q, effect = "NoSchedule" }]
%[9]s}
`, res, ns, routerImage(releases.Default.Name), runtimePort, DNSIP, realNodeLabel, "sandbox.gke.io/runtime", "gvisor", authz)
}

// scopedTokenAuthz is the authorization of a scoped-token router, whose
// HMAC secret is the Secret scopedTokenSecret makes.
var scopedTokenAuthz = fmt.Sprintf(`  authz_mode                = "scoped-token"
  authz_scoped_token_secret = { name = %q, key = %q }
`, routerSecretName, routerSecretKey)

// scopedTokenSecret creates, in ns, the Secret whose key signs the scoped
// tokens of the router there (the platform's part: the resource does not
// create it), and returns the key.
func scopedTokenSecret(t *testing.T, cs kubernetes.Interface, ns string) []byte {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	secret = []byte(hex.EncodeToString(secret)) // 64 bytes, printable
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: routerSecretName, Namespace: ns}, Data: map[string][]byte{routerSecretKey: secret}}
	ctx := context.Background()
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Secrets(ns).Delete(context.Background(), routerSecretName, metav1.DeleteOptions{})
	})
	return secret
}

// routerPod returns the ready router pod of ns.
func routerPod(t *testing.T, cs kubernetes.Interface, ns string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := eventually(context.Background(), 2*time.Minute, time.Second, func() error {
		list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + routerName})
		if err != nil {
			return err
		}
		for i := range list.Items {
			p := &list.Items[i]
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
					pod = p
					return nil
				}
			}
		}
		return fmt.Errorf("no ready pod with app=%s in %s (%d pods)", routerName, ns, len(list.Items))
	})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// routerRequest sends GET / through the router pod to the sandbox
// sandboxNS/sandboxName on the runtime's port, as the SDK's port-forward
// mode does (a port-forward to the router pod, the X-Sandbox-* headers),
// with token as the Bearer token unless it is empty. It returns the
// router's status and body.
func routerRequest(ctx context.Context, cfg *rest.Config, pod *corev1.Pod, sandboxNS, sandboxName, token string) (int, string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, "", err
	}
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, "", err
	}
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", routerProxyPort)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, "", err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return 0, "", fmt.Errorf("port-forward to %s/%s: %w", pod.Namespace, pod.Name, err)
	case <-ctx.Done():
		return 0, "", ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return 0, "", fmt.Errorf("port-forward to %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if len(ports) == 0 {
		return 0, "", fmt.Errorf("port-forward to %s/%s: no local port", pod.Namespace, pod.Name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("X-Sandbox-ID", sandboxName)
	req.Header.Set("X-Sandbox-Namespace", sandboxNS)
	req.Header.Set("X-Sandbox-Port", fmt.Sprint(runtimePort))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, strings.TrimSpace(string(body)), nil
}
