package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// webhookServiceRef names the Service a v0.5.x release's CRDs send their
// ConversionReviews to.
type webhookServiceRef struct {
	Namespace, Name string
	Port            int32
}

// webhookService is where every v0.5.x release points its CRDs' conversion
// webhook (k8s/crds/agents.x-k8s.io_sandboxes.yaml:8029-8040 at v0.5.0, the
// same in the other CRDs and releases; the Service is k8s/controller.yaml
// at v0.5.6: port 443 to 9443).
var webhookService = webhookServiceRef{Namespace: "agent-sandbox-system", Name: "agent-sandbox-webhook-service", Port: 443}

// serviceRoute makes one Service of the local cluster reachable by its API
// server, so a v0.5.x release's CRDs reach their conversion webhook as the
// release has them (the Service agent-sandbox-system/agent-sandbox-webhook-service),
// served by the release's own controller running out of cluster.
//
// The local control plane sends everything addressed to the cluster network
// (webhooks reached through a Service among it) over HTTP CONNECT to the unix
// socket of its "cluster" egress selector, where nobody listens
// (internal/devenv/localcluster/cluster/components.go, egressSelectorConfig).
// The route listens there and splices a CONNECT to the Service's ClusterIP
// and port to the controller's webhook on 127.0.0.1; every other destination is
// refused at once with 502, as it was without a listener.
type serviceRoute struct {
	ln      net.Listener
	socket  string
	target  string // "<cluster IP>:<port>", as the API server asks for it
	backend string // the webhook's 127.0.0.1 address
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
	routed  int
}

// egressSocket reads the unix socket of the "cluster" egress selection from
// the local cluster's egress selector configuration (pki/egress-selector.yaml
// in its run directory).
func egressSocket(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "pki", "egress-selector.yaml"))
	if err != nil {
		return "", fmt.Errorf("reading the local cluster's egress selector configuration: %w", err)
	}
	m := regexp.MustCompile(`(?m)^\s*udsName:\s*(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s names no unix socket (udsName) for the cluster egress", filepath.Join(dir, "pki", "egress-selector.yaml"))
	}
	return string(m[1]), nil
}

// ensureWebhookService creates the namespace and the Service of svc as the
// release's manifest has them (k8s/controller.yaml:129-141 at v0.5.6:
// selector app=agent-sandbox-controller, port 443 to 9443) if they do not
// exist, and returns the Service's ClusterIP.
func ensureWebhookService(ctx context.Context, cfg *rest.Config, svc webhookServiceRef) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: svc.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating namespace %s: %w", svc.Namespace, err)
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "agent-sandbox-controller"},
			Ports: []corev1.ServicePort{{
				Name: "webhook", Port: svc.Port, TargetPort: intstr.FromInt32(9443), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	got, err := cs.CoreV1().Services(svc.Namespace).Create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) {
		got, err = cs.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	}
	if err != nil {
		return "", fmt.Errorf("creating Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	ip := got.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone {
		return "", fmt.Errorf("service %s/%s has no cluster IP (%q)", svc.Namespace, svc.Name, ip)
	}
	return ip, nil
}

// startServiceRoute listens on socket and routes CONNECTs to target to
// backend.
func startServiceRoute(socket, target, backend string) (*serviceRoute, error) {
	// A socket file left by an earlier run of the same directory is stale:
	// the cluster's own processes never listen there.
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("listening on the cluster egress socket: %w", err)
	}
	r := &serviceRoute{ln: ln, socket: socket, target: target, backend: backend, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *serviceRoute) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			_ = c.Close()
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(c)
			r.serve(c)
		}()
	}
}

func (r *serviceRoute) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *serviceRoute) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	_ = c.Close()
}

// serve answers one CONNECT: 200 and a spliced connection for the target,
// 502 for anything else.
func (r *serviceRoute) serve(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if req.Method != http.MethodConnect || req.Host != r.target {
		_, _ = fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.DialTimeout("tcp", r.backend, 5*time.Second)
	if err != nil {
		_, _ = fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	if !r.track(up) {
		_ = up.Close()
		return
	}
	defer r.untrack(up)
	r.mu.Lock()
	r.routed++
	r.mu.Unlock()
	if _, err := fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the client sent after the CONNECT may sit in br already.
		_, _ = io.Copy(up, br)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// connections is how many CONNECTs were routed to the backend.
func (r *serviceRoute) connections() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.routed
}

// stop closes the listener and every open connection and waits for the
// goroutines.
func (r *serviceRoute) stop() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	_ = os.Remove(r.socket)
	return err
}

// hostPort joins an IP and port as the API server writes a CONNECT target.
func hostPort(ip string, port int32) string { return net.JoinHostPort(ip, strconv.Itoa(int(port))) }
