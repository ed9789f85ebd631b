package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// createNetns creates a network namespace kept alive by a bind mount at
// path (like `ip netns add`, but inside the cluster directory, so that no
// /run/netns entry is created). Only the calling goroutine's thread enters
// the new namespace, and that thread is discarded afterwards.
func createNetns(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	f.Close()
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the goroutine ends with its thread in the new
		// namespace, and Go then terminates the thread instead of reusing it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
			return
		}
		src := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("bind-mounting the network namespace on %s: %w", path, err)
			return
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// deleteNetns unmounts and removes a namespace made by createNetns. The
// namespace (with its interfaces, routes, iptables rules and ipsets) disappears
// once no process is left in it.
func deleteNetns(path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errnoIs(err, unix.EINVAL) && !errnoIs(err, unix.ENOENT) {
		return fmt.Errorf("unmounting %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// inNetns runs a command inside the namespace at path.
func inNetns(path string, args ...string) error {
	cmd := exec.Command("nsenter", append([]string{"--net=" + path, "--"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s (in the node's network namespace): %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setupNodeNetwork prepares the node's namespace: loopback, the bridge
// with the node's address (the CNI bridge plugin adopts it), forwarding
// between the bridge and whatever a test connects, and bridged traffic
// through netfilter so that the NetworkPolicy enforcer sees pod-to-pod packets.
// There is deliberately no default route: only directly connected
// networks (and routes a test adds) are reachable.
func setupNodeNetwork(netns string, o RealNodeOptions) error {
	nodeIP, err := o.NodeIP()
	if err != nil {
		return err
	}
	bits := netip.MustParsePrefix(o.PodCIDR).Bits()
	steps := [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "link", "add", realNodeBridge, "type", "bridge"},
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", nodeIP, bits), "dev", realNodeBridge},
		{"ip", "link", "set", realNodeBridge, "up"},
		// /proc/sys/net is per network namespace (of the process that
		// opens it): these settings exist only inside the node.
		{"sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"},
		{"sh", "-c", "echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables"},
		{"sh", "-c", "echo 1 > /proc/sys/net/bridge/bridge-nf-call-ip6tables"},
	}
	for _, s := range steps {
		if err := inNetns(netns, s...); err != nil {
			if strings.Contains(s[len(s)-1], "bridge-nf-call") {
				return fmt.Errorf("%w (the kernel needs br_netfilter for NetworkPolicy between pods on one bridge)", err)
			}
			return err
		}
	}
	return nil
}

// forwardUnixToTCP serves a unix socket whose connections are piped to a
// TCP address on the host's loopback: node-proxy, inside the node's
// namespace, reaches the apiserver through it.
func forwardUnixToTCP(ctx context.Context, socket, target string, logger *log.Logger) (io.Closer, error) {
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				d := net.Dialer{Timeout: 5 * time.Second}
				up, err := d.DialContext(ctx, "tcp", target)
				if err != nil {
					logger.Printf("apiserver forward: %v", err)
					c.Close()
					return
				}
				pipe(c, up)
			}()
		}
	}()
	return ln, nil
}

// pipe copies both ways until either side is done, then closes both.
func pipe(a, b net.Conn) {
	var once sync.Once
	closeBoth := func() { a.Close(); b.Close() }
	go func() { _, _ = io.Copy(a, b); once.Do(closeBoth) }()
	_, _ = io.Copy(b, a)
	once.Do(closeBoth)
}

// NodeProxyConfig configures the node-proxy component, which runs inside
// the node's network namespace.
type NodeProxyConfig struct {
	// ListenTCP (inside the namespace) is piped to APIServerSocket.
	ListenTCP       string
	APIServerSocket string
	// EgressSocket serves the apiserver's "cluster" egress (HTTP CONNECT);
	// only Allowed (host:port) may be reached, from inside the namespace.
	EgressSocket string
	Allowed      string
}

// NodeProxy runs node-proxy until ctx ends.
func NodeProxy(ctx context.Context, cfg NodeProxyConfig, logOut io.Writer) error {
	logger := log.New(logOut, "node-proxy: ", log.LstdFlags|log.Lmicroseconds)
	tcp, err := net.Listen("tcp", cfg.ListenTCP)
	if err != nil {
		return fmt.Errorf("listening on %s inside the node: %w", cfg.ListenTCP, err)
	}
	defer tcp.Close()
	_ = os.Remove(cfg.EgressSocket)
	egress, err := net.Listen("unix", cfg.EgressSocket)
	if err != nil {
		return err
	}
	defer egress.Close()
	defer os.Remove(cfg.EgressSocket)
	logger.Printf("apiserver at %s (inside the node) -> %s; apiserver egress %s -> %s only", cfg.ListenTCP, cfg.APIServerSocket, cfg.EgressSocket, cfg.Allowed)

	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			go func() {
				up, err := net.DialTimeout("unix", cfg.APIServerSocket, 5*time.Second)
				if err != nil {
					logger.Printf("apiserver: %v", err)
					c.Close()
					return
				}
				pipe(c, up)
			}()
		}
	}()
	go func() {
		for {
			c, err := egress.Accept()
			if err != nil {
				return
			}
			go serveConnect(c, cfg.Allowed, logger)
		}
	}()
	<-ctx.Done()
	return nil
}

// serveConnect answers one HTTP CONNECT request from the apiserver.
func serveConnect(c net.Conn, allowed string, logger *log.Logger) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	target := req.Host
	if req.Method != http.MethodConnect || target != allowed {
		logger.Printf("refused %s %s (only %s, the real kubelet, is reachable)", req.Method, target, allowed)
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		c.Close()
		return
	}
	if _, err := fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		c.Close()
		up.Close()
		return
	}
	// Bytes the client sent right after the request are in br.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			c.Close()
			up.Close()
			return
		}
	}
	pipe(c, up)
}
