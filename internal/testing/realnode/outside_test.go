package realnode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// The "outside world" of the sandboxes: a network namespace owned by a
// helper process (this test binary, re-executed under `unshare --net`), joined
// to the real node's namespace by one veth pair. It lives exactly as long as
// the helper: when the helper exits (its stdin closes with the test), the
// namespace and the veth pair disappear with it.
//
//	node namespace                          outside (helper) namespace
//	bridge 198.18.0.1/24 (pods)             e2e-o 198.19.0.2/24
//	e2e-n  198.19.0.1/24  <---- veth ---->  lo: 198.19.0.10  "allowed" test server
//	route 169.254.0.0/16 via 198.19.0.2         198.19.0.20  "outside-allow-list" test server
//	                                            169.254.169.1   a link-local server (allowed range)
//	                                            169.254.169.254 stand-in metadata server
//	                                            169.254.20.10   DNS stand-in (the pods' nameserver)
//
// Every address is either RFC 2544's benchmarking range or link-local, and
// exists only inside these namespaces; nothing is routed to the host.
const (
	outsideHelperVar = "AGENTSANDBOX_E2E_OUTSIDE_HELPER"

	nodeVethIP    = "198.19.0.1"
	outsideVethIP = "198.19.0.2"
	allowedIP     = "198.19.0.10"
	deniedIP      = "198.19.0.20"
	linkLocalIP   = "169.254.169.1"
	metadataIP    = "169.254.169.254"
	dnsIP         = "169.254.20.10" // the real node's --real-node-cluster-dns default
	podCIDR       = "198.18.0.0/24" // the real node's --real-node-pod-cidr default
	allowedName   = "allowed.e2e.test."
	allowedBody   = "allowed-server"
	deniedBody    = "outside-allow-list-server"
	linkLocalBody = "link-local-server"
	metadataBody  = "stand-in-metadata-server"
	nodeVeth      = "e2e-n"
	outsideVeth   = "e2e-o"
)

// outside is the running helper.
type outside struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startOutside starts the helper, wires its namespace to the node's and
// waits until its servers listen.
func startOutside(t *testing.T) *outside {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--net", "--", self)
	cmd.Env = append(os.Environ(), outsideHelperVar+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the outside helper: %v", err)
	}
	o := &outside{cmd: cmd, stdin: stdin}
	t.Cleanup(o.stop)
	pid := strconv.Itoa(cmd.Process.Pid)
	node := func(args ...string) {
		t.Helper()
		mustRun(t, append([]string{"nsenter", "--net=" + cluster.nodeNetns, "--"}, args...)...)
	}
	out := func(args ...string) {
		t.Helper()
		mustRun(t, append([]string{"nsenter", "--target", pid, "--net", "--"}, args...)...)
	}
	// Both ends are created inside the node's namespace and one is moved
	// straight to the helper's: no interface ever appears on the host.
	node("ip", "link", "add", nodeVeth, "type", "veth", "peer", "name", outsideVeth)
	node("ip", "link", "set", outsideVeth, "netns", pid)
	node("ip", "addr", "add", nodeVethIP+"/24", "dev", nodeVeth)
	node("ip", "link", "set", nodeVeth, "up")
	node("ip", "route", "add", "169.254.0.0/16", "via", outsideVethIP)
	out("ip", "link", "set", "lo", "up")
	out("ip", "addr", "add", outsideVethIP+"/24", "dev", outsideVeth)
	out("ip", "link", "set", outsideVeth, "up")
	for _, ip := range []string{allowedIP, deniedIP, linkLocalIP, metadataIP, dnsIP} {
		out("ip", "addr", "add", ip+"/32", "dev", "lo")
	}
	out("ip", "route", "add", podCIDR, "via", nodeVethIP)

	if _, err := io.WriteString(stdin, "serve\n"); err != nil {
		t.Fatalf("outside helper: %v", err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("unexpected %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("outside helper did not start its servers: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("outside helper did not start its servers within 20s")
	}
	return o
}

func (o *outside) stop() {
	_ = o.stdin.Close()
	kill(o.cmd)
}

func mustRun(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
}

// runOutsideHelper is the helper's body: it waits for "serve" (sent once
// its namespace has addresses), serves the test servers and the DNS
// stand-in, and exits when its stdin closes.
func runOutsideHelper() int {
	in := bufio.NewReader(os.Stdin)
	if line, err := in.ReadString('\n'); err != nil || strings.TrimSpace(line) != "serve" {
		fmt.Fprintf(os.Stderr, "outside helper: expected serve, got %q (%v)\n", line, err)
		return 1
	}
	for ip, body := range map[string]string{allowedIP: allowedBody, deniedIP: deniedBody, linkLocalIP: linkLocalBody, metadataIP: metadataBody} {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "80"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "outside helper: %v\n", err)
			return 1
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, body)
		})}
		go func() { _ = srv.Serve(ln) }()
	}
	pc, err := net.ListenPacket("udp", net.JoinHostPort(dnsIP, "53"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "outside helper: %v\n", err)
		return 1
	}
	go serveDNS(pc)
	fmt.Println("ready")
	// Until the test closes stdin (or dies).
	_, _ = io.Copy(io.Discard, in)
	return 0
}

// serveDNS answers A queries for allowedName with allowedIP and everything
// else with NXDOMAIN: the DNS stand-in.
func serveDNS(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		resp := dnsmessage.Message{
			Header:    dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeNameError},
			Questions: []dnsmessage.Question{q},
		}
		if strings.EqualFold(q.Name.String(), allowedName) {
			resp.RCode = dnsmessage.RCodeSuccess
			if q.Type == dnsmessage.TypeA {
				ip := net.ParseIP(allowedIP).To4()
				resp.Answers = []dnsmessage.Resource{{
					Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5},
					Body:   &dnsmessage.AResource{A: [4]byte{ip[0], ip[1], ip[2], ip[3]}},
				}}
			}
		}
		out, err := resp.Pack()
		if err != nil {
			continue
		}
		_, _ = pc.WriteTo(out, addr)
	}
}

// errTimeout marks a wait that ran out of time.
var errTimeout = errors.New("timed out")

// eventually retries check until it returns nil or the timeout passes.
func eventually(ctx context.Context, timeout, every time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %s: %w", errTimeout, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
