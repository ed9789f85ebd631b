package realnode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// The sandbox router of TestE2ESDK: upstream's Go router of the release
// under test (sandbox-router/cmd, built from the module's source by
// scripts/realnode-images.sh), installed from the release's own deploy
// manifests (sandbox-router/deploy) with the changes this node needs and
// authorization on. Until the provider's router resource is on main
// (issue 33, the router half), the test installs it itself.
const (
	routerName       = "sandbox-router"
	routerSecretName = "sandbox-router-scoped-token"
	routerSecretKey  = "secret"
	routerSecretDir  = "/etc/sandbox-router/scoped-token"
)

// routerImage is the image realnode-images.sh builds for release r.
func routerImage(r string) string { return "localhost/localcluster/sandbox-router:" + r }

// moduleDir is the agent-sandbox module's source in the Go module cache.
func moduleDir(t *testing.T) string {
	t.Helper()
	root, err := testenv.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "sigs.k8s.io/agent-sandbox")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/agent-sandbox: %v", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if version != releases.Default.Name || dir == "" {
		t.Fatalf("go.mod requires sigs.k8s.io/agent-sandbox %s (dir %q), the default release is %s", version, dir, releases.Default.Name)
	}
	return dir
}

// routerManifests reads the release's deploy manifests that a plain-HTTP,
// scoped-token router uses: the ServiceAccount, the Deployment, the
// Service and the NetworkPolicy (rbac.yaml is for --cache-enabled and
// rbac-tokenreview.yaml for --authz-mode=tokenreview, neither used here;
// pdb.yaml protects two replicas, and one runs here).
func routerManifests(t *testing.T) (sa *corev1.ServiceAccount, dep *appsv1.Deployment, svc *corev1.Service, np *networkingv1.NetworkPolicy) {
	t.Helper()
	dir := filepath.Join(moduleDir(t), "sandbox-router", "deploy")
	for _, f := range []string{"serviceaccount.yaml", "deployment.yaml", "service.yaml", "networkpolicy.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch o := obj.(type) {
			case *corev1.ServiceAccount:
				sa = o
			case *appsv1.Deployment:
				dep = o
			case *corev1.Service:
				svc = o
			case *networkingv1.NetworkPolicy:
				np = o
			default:
				t.Fatalf("%s: unexpected %T", f, obj)
			}
		}
	}
	if sa == nil || dep == nil || svc == nil || np == nil {
		t.Fatalf("%s: missing a manifest (service account %v, deployment %v, service %v, network policy %v)", dir, sa != nil, dep != nil, svc != nil, np != nil)
	}
	return sa, dep, svc, np
}

// installRouter installs the router with --authz-mode=scoped-token and
// returns the scoped-token secret (the key that signs per-sandbox tokens)
// and the running router pod. What differs from the release's manifests,
// and why:
//   - image: the one built from the release's source (nothing is pulled);
//     one replica (one node);
//   - --authz-mode=scoped-token with the secret from a Secret (the
//     manifests run the default allow-all); TokenReview would admit any
//     authenticated caller to any sandbox (authz/tokenreview.go: "any
//     authenticated caller is then allowed to reach any sandbox"), so only
//     scoped tokens refuse a second team;
//   - --cache-enabled=false and no service-account token: pods of the real
//     node cannot reach the API server (no kube-proxy), so the router
//     resolves sandboxes by cluster DNS (<sandbox>.<ns>.svc.cluster.local,
//     proxy/resolve.go), answered by the test's DNS stand-in;
//   - the NetworkPolicy's DNS egress goes to the node-local DNS address
//     (there are no kube-system DNS pods); the API server rule goes (no
//     cache, no TokenReview);
//   - namespace: the sandboxes' (see below), not agent-sandbox-system;
//   - a toleration for the gVisor node's taint (the router runs in runc).
func installRouter(t *testing.T, cs kubernetes.Interface, ns string) ([]byte, *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	sa, dep, svc, np := routerManifests(t)

	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	secret = []byte(hex.EncodeToString(secret)) // 64 bytes, printable
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: routerSecretName, Namespace: ns},
		Data:       map[string][]byte{routerSecretKey: secret},
	}
	// The SDK's port-forward mode finds the router by the EndpointSlices
	// of sandbox-router-svc in the sandbox's own namespace
	// (clients/go/sandbox/tunnel.go, resolveRouterPod): the router runs in
	// the team's namespace.
	sa.Namespace, dep.Namespace, svc.Namespace, np.Namespace = ns, ns, ns, ns
	// Its ClusterRoleBinding names the service account by namespace
	// (rbac.yaml), unused here.

	sa.AutomountServiceAccountToken = ptr.To(false)
	dep.Spec.Replicas = ptr.To[int32](1)
	spec := &dep.Spec.Template.Spec
	spec.AutomountServiceAccountToken = ptr.To(false)
	spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	spec.NodeSelector = map[string]string{"localcluster.agentsandbox.dev/real-node": "true"}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "scoped-token", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: routerSecretName, DefaultMode: ptr.To[int32](0o440)},
	}})
	c := &spec.Containers[0]
	c.Image = routerImage(releases.Default.Name)
	c.ImagePullPolicy = corev1.PullNever
	var args []string
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--cache-enabled") {
			args = append(args, a)
		}
	}
	c.Args = append(args, "--cache-enabled=false", "--authz-mode=scoped-token",
		"--authz-scoped-token-secret-file="+routerSecretDir+"/"+routerSecretKey)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "scoped-token", MountPath: routerSecretDir, ReadOnly: true})
	// The distroless image's nonroot user, by number (runAsNonRoot).
	c.SecurityContext.RunAsUser = ptr.To[int64](65532)
	spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](65532)}

	var egress []networkingv1.NetworkPolicyEgressRule
	for _, r := range np.Spec.Egress {
		switch {
		case hasPort(r.Ports, 53):
			r.To = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: DNSIP + "/32"}}}
		case hasPort(r.Ports, 443):
			continue
		}
		egress = append(egress, r)
	}
	np.Spec.Egress = egress

	objs := []runtime.Object{sec, sa, svc, np, dep}
	for _, o := range objs {
		if err := create(ctx, cs, o); err != nil {
			t.Fatalf("installing the router: %T: %v", o, err)
		}
	}
	t.Cleanup(func() {
		bg := context.Background()
		_ = cs.AppsV1().Deployments(ns).Delete(bg, dep.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
		_ = cs.CoreV1().Services(ns).Delete(bg, svc.Name, metav1.DeleteOptions{})
		_ = cs.NetworkingV1().NetworkPolicies(ns).Delete(bg, np.Name, metav1.DeleteOptions{})
		_ = cs.CoreV1().ServiceAccounts(ns).Delete(bg, sa.Name, metav1.DeleteOptions{})
		_ = cs.CoreV1().Secrets(ns).Delete(bg, sec.Name, metav1.DeleteOptions{})
	})

	sel := metav1.FormatLabelSelector(dep.Spec.Selector)
	var pod *corev1.Pod
	err := eventually(ctx, 3*time.Minute, time.Second, func() error {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		var states []string
		for i := range list.Items {
			p := &list.Items[i]
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue && p.Status.PodIP != "" {
					pod = p
					return nil
				}
			}
			st := string(p.Status.Phase)
			for _, cst := range p.Status.ContainerStatuses {
				if cst.State.Waiting != nil {
					st += " (" + cst.State.Waiting.Reason + ": " + cst.State.Waiting.Message + ")"
				}
				if cst.State.Terminated != nil {
					st += fmt.Sprintf(" (exited %d: %s)", cst.State.Terminated.ExitCode, cst.State.Terminated.Message)
				}
			}
			states = append(states, p.Name+" "+st)
		}
		return fmt.Errorf("no ready router pod (%s): %s", sel, strings.Join(states, "; "))
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret, pod
}

func hasPort(ports []networkingv1.NetworkPolicyPort, port int) bool {
	for _, p := range ports {
		if p.Port != nil && p.Port.IntValue() == port {
			return true
		}
	}
	return false
}

// create creates one of the router's objects.
func create(ctx context.Context, cs kubernetes.Interface, obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Secret:
		_, err = cs.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ServiceAccount:
		_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *networkingv1.NetworkPolicy:
		_, err = cs.NetworkingV1().NetworkPolicies(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.Deployment:
		_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unexpected %T", obj)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
