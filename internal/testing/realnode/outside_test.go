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
	"slices"
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
//	e2e-n  198.19.0.1/24  <---- veth ---->  lo: every address of OutsideServers
//	routes 169.254.0.0/16 and the               (probes.go), HTTP on 80 and 8080,
//	  public/private stand-ins                  each answering with its own name;
//	  via 198.19.0.2                            DNSIP: the DNS stand-in (UDP, TCP)
//
// Every address exists only inside these namespaces; nothing is routed to
// the host.
const (
	outsideHelperVar = "AGENTSANDBOX_E2E_OUTSIDE_HELPER"
	// outsideExtraVar lists further servers of the helper, "ip:port" comma
	// separated (outsideOptions.Extra); outsideHostsVar names its hosts
	// file (outsideOptions.Hosts).
	outsideExtraVar = "AGENTSANDBOX_E2E_OUTSIDE_EXTRA"
	outsideHostsVar = "AGENTSANDBOX_E2E_OUTSIDE_HOSTS"

	nodeVethIP    = "198.19.0.1"
	outsideVethIP = "198.19.0.2"
	podCIDR       = "198.18.0.0/24" // the real node's --real-node-pod-cidr default
	nodeVeth      = "e2e-n"
	outsideVeth   = "e2e-o"
)

// serverBody is what the outside server at addr:port answers.
func serverBody(addr string, port int) string { return fmt.Sprintf("outside %s:%d", addr, port) }

// outside is the running helper.
type outside struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// outsideOptions add to the helper what TestE2ESDK needs besides
// OutsideServers.
type outsideOptions struct {
	// Extra are further HTTP servers ("ip:port"), each answering with
	// serverBody; each ip is routed from the node to the helper.
	Extra []string
	// Hosts is a file of "name ip" lines (names fully qualified, with the
	// final dot) the DNS stand-in also answers, read at every query: the
	// cluster DNS records (<sandbox>.<namespace>.svc.cluster.local) that
	// CoreDNS would serve and that the router resolves.
	Hosts string
}

// startOutside starts the helper, wires its namespace to the node's and
// waits until its servers listen.
func startOutside(t *testing.T) *outside { return startOutsideWith(t, outsideOptions{}) }

// startOutsideWith is startOutside with o.
func startOutsideWith(t *testing.T, o outsideOptions) *outside {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--net", "--", self)
	cmd.Env = append(os.Environ(), outsideHelperVar+"=1", outsideExtraVar+"="+strings.Join(o.Extra, ","), outsideHostsVar+"="+o.Hosts)
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
	helper := &outside{cmd: cmd, stdin: stdin}
	t.Cleanup(helper.stop)
	pid := strconv.Itoa(cmd.Process.Pid)
	node := func(args ...string) {
		t.Helper()
		mustRun(t, append([]string{"nsenter", "--net=" + cluster.nodeNetns, "--"}, args...)...)
	}
	out := func(args ...string) {
		t.Helper()
		mustRun(t, append([]string{"nsenter", "--target", pid, "--net", "--"}, args...)...)
	}
	// cmd.Process.Pid is unshare's until it has unshared and exec'd the
	// helper: a link moved to that pid before then lands in the test's own
	// namespace (seen once in CI: "Cannot find device"). Wait for the new
	// namespace first.
	waitForOwnNetns(t, pid)
	// Both ends are created inside the node's namespace and one is moved
	// straight to the helper's: no interface ever appears on the host.
	node("ip", "link", "add", nodeVeth, "type", "veth", "peer", "name", outsideVeth)
	// Delete the pair when done (deleting one end deletes both at once).
	// Left to the helper's namespace dying, the kernel removes it later, in
	// its namespace clean-up work, and the next test's `ip link add` can
	// still find it ("File exists", seen once in CI: TestE2ESDK right after
	// TestE2E). Runs before helper.stop (cleanups run last first).
	t.Cleanup(func() {
		del := []string{"nsenter", "--net=" + cluster.nodeNetns, "--", "ip", "link", "del", nodeVeth}
		if out, err := exec.Command(del[0], del[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", strings.Join(del, " "), err, strings.TrimSpace(string(out)))
		}
	})
	node("ip", "link", "set", outsideVeth, "netns", pid)
	node("ip", "addr", "add", nodeVethIP+"/24", "dev", nodeVeth)
	node("ip", "link", "set", nodeVeth, "up")
	node("ip", "route", "add", "169.254.0.0/16", "via", outsideVethIP)
	extraIPs := extraAddrs(o.Extra)
	for _, ip := range append([]string{PublicIP, Private10, Private172, Private192}, extraIPs...) {
		node("ip", "route", "replace", ip+"/32", "via", outsideVethIP)
	}
	out("ip", "link", "set", "lo", "up")
	out("ip", "addr", "add", outsideVethIP+"/24", "dev", outsideVeth)
	out("ip", "link", "set", outsideVeth, "up")
	for _, ip := range append(append([]string{DNSIP}, OutsideServers...), extraIPs...) {
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
	return helper
}

// extraAddrs returns the distinct addresses of "ip:port" servers that are
// not OutsideServers already.
func extraAddrs(extra []string) []string {
	var ips []string
	for _, hp := range extra {
		ip, _, _ := net.SplitHostPort(hp)
		if ip != "" && !slices.Contains(OutsideServers, ip) && !slices.Contains(ips, ip) {
			ips = append(ips, ip)
		}
	}
	return ips
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
	servers := []string{}
	for _, ip := range OutsideServers {
		for _, port := range []int{HTTPPort, AltPort} {
			servers = append(servers, net.JoinHostPort(ip, strconv.Itoa(port)))
		}
	}
	if extra := os.Getenv(outsideExtraVar); extra != "" {
		servers = append(servers, strings.Split(extra, ",")...)
	}
	hostsFile = os.Getenv(outsideHostsVar)
	for _, hp := range servers {
		ip, portStr, _ := net.SplitHostPort(hp)
		port, _ := strconv.Atoi(portStr)
		ln, err := net.Listen("tcp", hp)
		if err != nil {
			fmt.Fprintf(os.Stderr, "outside helper: %v\n", err)
			return 1
		}
		body := serverBody(ip, port)
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, body)
		})}
		go func() { _ = srv.Serve(ln) }()
	}
	pc, err := net.ListenPacket("udp", net.JoinHostPort(DNSIP, "53"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "outside helper: %v\n", err)
		return 1
	}
	go serveDNS(pc)
	tl, err := net.Listen("tcp", net.JoinHostPort(DNSIP, "53"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "outside helper: %v\n", err)
		return 1
	}
	go serveDNSTCP(tl)
	fmt.Println("ready")
	// Until the test closes stdin (or dies).
	_, _ = io.Copy(io.Discard, in)
	return 0
}

// hostsFile is the helper's outsideOptions.Hosts ("" for none).
var hostsFile string

// lookupHosts returns the address of name in hostsFile, or "".
func lookupHosts(name string) string {
	if hostsFile == "" {
		return ""
	}
	data, err := os.ReadFile(hostsFile)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.EqualFold(f[0], name) {
			return f[1]
		}
	}
	return ""
}

// dnsAnswer answers A queries for DNSName with AllowedIP, for the names of
// the hosts file with their address, and everything else with NXDOMAIN:
// the DNS stand-in.
func dnsAnswer(query []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	resp := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeNameError},
		Questions: []dnsmessage.Question{q},
	}
	answer := ""
	if strings.EqualFold(q.Name.String(), DNSName) {
		answer = AllowedIP
	} else {
		answer = lookupHosts(q.Name.String())
	}
	if answer != "" {
		resp.RCode = dnsmessage.RCodeSuccess
		if q.Type == dnsmessage.TypeA {
			ip := net.ParseIP(answer).To4()
			resp.Answers = []dnsmessage.Resource{{
				Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5},
				Body:   &dnsmessage.AResource{A: [4]byte{ip[0], ip[1], ip[2], ip[3]}},
			}}
		}
	}
	out, err := resp.Pack()
	return out, err == nil
}

func serveDNS(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if out, ok := dnsAnswer(buf[:n]); ok {
			_, _ = pc.WriteTo(out, addr)
		}
	}
}

// serveDNSTCP is the stand-in over TCP (RFC 1035 4.2.2: two-byte length
// prefix), one query per connection.
func serveDNSTCP(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			var l [2]byte
			if _, err := io.ReadFull(c, l[:]); err != nil {
				return
			}
			q := make([]byte, int(l[0])<<8|int(l[1]))
			if _, err := io.ReadFull(c, q); err != nil {
				return
			}
			if out, ok := dnsAnswer(q); ok {
				_, _ = c.Write(append([]byte{byte(len(out) >> 8), byte(len(out))}, out...))
			}
		}()
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

// waitForOwnNetns waits until process pid is in a network namespace other
// than this process's.
func waitForOwnNetns(t *testing.T, pid string) {
	t.Helper()
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	err = eventually(context.Background(), 10*time.Second, 10*time.Millisecond, func() error {
		ns, err := os.Readlink("/proc/" + pid + "/ns/net")
		switch {
		case err != nil:
			return err
		case ns == self:
			return fmt.Errorf("still in this process's network namespace %s", ns)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the outside helper (pid %s) is not in a network namespace of its own: %v", pid, err)
	}
}
