package realnode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// EnableVar turns the run on; `make testacc-e2e` sets it.
const EnableVar = "AGENTSANDBOX_E2E"

// DirVar names the cluster directory (scripts/testacc-e2e.sh sets it so that
// it can run `localcluster down` itself if this process is killed).
const DirVar = "AGENTSANDBOX_E2E_DIR"

var (
	// skipReason is why the tests skip; empty when the environment runs.
	skipReason string
	// cluster is the running real-node cluster.
	cluster struct {
		dir, kubeconfig, bin, nodeNetns string
	}
	summary = &checkLog{}
	// enforcementGap says why NetworkPolicies cannot be enforced on this
	// machine ("" when they can); measured at start.
	enforcementGap string
)

// checkLog records every check and its outcome for the closing summary.
type checkLog struct {
	mu    sync.Mutex
	lines []string
}

func (c *checkLog) add(test, check string, ok bool, detail string) {
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	c.addVerdict(verdict, test, check, detail)
}

func (c *checkLog) addVerdict(verdict, test, check, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, fmt.Sprintf("  %s  %-28s %s: %s", verdict, test, check, detail))
}

func TestMain(m *testing.M) {
	// The testenv watchdog re-executes this binary; in that child this
	// never returns.
	testenv.RunWatchdogIfRequested()
	if os.Getenv(outsideHelperVar) != "" {
		os.Exit(runOutsideHelper())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		return m.Run()
	}
	if os.Getenv(EnableVar) != "1" {
		skipReason = "end-to-end run on a real node: set " + EnableVar + "=1 (make testacc-e2e)"
		return m.Run()
	}
	if reason := preflight(); reason != "" {
		skipReason = "this machine cannot run the real node: " + reason
		fmt.Fprintf(os.Stderr, "e2e: SKIP: %s\n", skipReason)
		return m.Run()
	}
	root, err := testenv.FindRepoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	baseline, err := snapshotHost()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: host snapshot: %v\n", err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := startCluster(ctx, root)
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAILED to start: %v\n", err)
	} else {
		for _, kv := range append(env.Vars(), "TF_ACC=1") {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		code = m.Run()
		if err := env.Stop(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: stopping the stand-in controller: %v\n", err)
			code = 1
		}
	}
	if code2 := stopCluster(baseline, code == 0); code2 != 0 {
		code = code2
	}
	fmt.Fprintf(os.Stderr, "\ne2e: checks (%d):\n%s\n", len(summary.lines), strings.Join(summary.lines, "\n"))
	return code
}

// preflight says what this machine lacks for the real node, or "".
func preflight() string {
	var missing []string
	if os.Geteuid() != 0 {
		return "not root (the node needs network namespaces, mounts and cgroups)"
	}
	for _, tool := range []string{"containerd", "runc", "ctr", "nsenter", "unshare", "ip", "nft", "gcc", "debootstrap", "apt-get", "dpkg-deb", "patch", "terraform"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	for _, p := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return "missing " + strings.Join(missing, ", ") + " (Debian: apt-get install containerd runc containernetworking-plugins nftables iproute2 debootstrap gcc libc6-dev patch; terraform on PATH)"
	}
	// Kernel features: bridged traffic through netfilter (pod-to-pod
	// policy) and nfqueue (kube-network-policies' verdicts), checked in a
	// throw-away network namespace.
	out, err := exec.Command("unshare", "--net", "sh", "-c",
		"test -e /proc/sys/net/bridge/bridge-nf-call-iptables && echo bridge; test -e /proc/net/netfilter/nfnetlink_queue && echo nfqueue").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("cannot create a network namespace: %v: %s", err, bytes.TrimSpace(out))
	}
	if !bytes.Contains(out, []byte("bridge")) {
		return "the kernel has no br_netfilter (net.bridge.bridge-nf-call-iptables)"
	}
	if !bytes.Contains(out, []byte("nfqueue")) {
		return "the kernel has no nfnetlink_queue"
	}
	return ""
}

// script runs one of the repository's build scripts and returns the last
// line of its output (the path it built).
func script(ctx context.Context, path string, args ...string) (string, time.Duration, error) {
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], time.Since(t0), nil
}

// startCluster builds (or reuses) the binaries and images, starts the
// real-node cluster and the stand-in controller on it.
func startCluster(ctx context.Context, root string) (*testenv.Env, error) {
	bin, tBin, err := script(ctx, filepath.Join(root, "internal/devenv/localcluster/build.sh"))
	if err != nil {
		return nil, err
	}
	gvisor, tGV, err := script(ctx, filepath.Join(root, "internal/devenv/localcluster/build-gvisor.sh"))
	if err != nil {
		return nil, err
	}
	images, tImg, err := script(ctx, filepath.Join(root, "scripts/realnode-images.sh"))
	if err != nil {
		return nil, err
	}
	netpol, tNP, err := script(ctx, filepath.Join(root, "internal/devenv/localcluster/build-netpol.sh"))
	if err != nil {
		return nil, err
	}
	if ok, err := nftQueueSupported(); err != nil {
		return nil, err
	} else if !ok {
		enforcementGap = "NetworkPolicy cannot be enforced on this machine: kube-network-policies v0.8.0 (unmodified) runs on the real node, " +
			"but this kernel has no nft_queue (CONFIG_NFT_QUEUE) and refuses its nftables rules; these checks run on kernels that have it"
	}
	fmt.Fprintf(os.Stderr, "e2e: kube-network-policies %s (%s)\n", netpol, tNP.Round(time.Millisecond))
	fmt.Fprintf(os.Stderr, "e2e: localcluster %s (%s), gVisor %s (%s), images %s (%s)\n",
		bin, tBin.Round(time.Millisecond), gvisor, tGV.Round(time.Millisecond), images, tImg.Round(time.Millisecond))

	dir := os.Getenv(DirVar)
	if dir == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		dir = filepath.Join(root, ".cache", "e2e", hex.EncodeToString(b))
	}
	cluster.dir, cluster.bin = dir, bin
	cluster.nodeNetns = filepath.Join(dir, "node", "netns")
	t0 := time.Now()
	up := exec.CommandContext(ctx, bin, "up", "--dir", dir, "--timeout", "180s",
		"--system-nodes", "0", "--gvisor-nodes", "0",
		"--real-node", "--real-node-gvisor", gvisor, "--real-node-images", images, "--real-node-netpol", netpol)
	var out bytes.Buffer
	up.Stdout = &out
	up.Stderr = os.Stderr
	if err := up.Run(); err != nil {
		return nil, fmt.Errorf("localcluster up --real-node: %w", err)
	}
	cluster.kubeconfig = strings.TrimSpace(out.String())
	fmt.Fprintf(os.Stderr, "e2e: real-node cluster up in %s (%s)\n", time.Since(t0).Round(time.Millisecond), dir)

	return testenv.Start(ctx, testenv.Options{
		RepoRoot:   root,
		Kubeconfig: cluster.kubeconfig,
		Controller: testenv.DefaultController,
	})
}

// stopCluster runs `localcluster down` and checks that nothing the run
// started survives. It returns a non-zero exit code on leftovers.
func stopCluster(baseline hostSnapshot, testsPassed bool) int {
	if cluster.dir == "" {
		return 0
	}
	t0 := time.Now()
	down := exec.Command(cluster.bin, "down", "--dir", cluster.dir)
	down.Stdout, down.Stderr = os.Stderr, os.Stderr
	code := 0
	if err := down.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: localcluster down: %v\n", err)
		code = 1
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster stopped in %s\n", time.Since(t0).Round(time.Millisecond))
	leftovers := checkLeftovers(baseline, cluster.dir)
	if len(leftovers) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: the run left things behind:\n  - %s\n", strings.Join(leftovers, "\n  - "))
		summary.add("TestMain", "nothing left behind", false, strings.Join(leftovers, "; "))
		return 1
	}
	summary.add("TestMain", "nothing left behind", true,
		"no process, mount, network namespace, nftables table, link, cgroup or shim socket of the run remains; host ip_forward unchanged")
	if code == 0 && testsPassed && os.Getenv("AGENTSANDBOX_E2E_KEEP") != "1" {
		_ = os.RemoveAll(cluster.dir)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: logs kept in %s\n", cluster.dir)
	}
	return code
}

// hostSnapshot is what the host looks like before the run.
type hostSnapshot struct {
	netns      map[string]bool // network namespaces of live processes
	nsfsMounts map[string]bool
	nftTables  string
	links      map[string]bool
	ipForward  string
	shimSocks  map[string]bool
}

func snapshotHost() (hostSnapshot, error) {
	s := hostSnapshot{netns: processNetns(), links: map[string]bool{}, shimSocks: dirEntries("/run/containerd/s")}
	var err error
	if s.nsfsMounts, err = nsfsMounts(); err != nil {
		return s, err
	}
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return s, fmt.Errorf("nft list tables: %w", err)
	}
	s.nftTables = string(out)
	for _, l := range hostLinks() {
		s.links[l] = true
	}
	fwd, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	s.ipForward = strings.TrimSpace(string(fwd))
	return s, nil
}

// checkLeftovers compares the host with the baseline and lists whatever
// the run left.
func checkLeftovers(base hostSnapshot, dir string) []string {
	var left []string
	// Processes: anything naming the cluster directory, or living in a
	// network namespace that did not exist before the run.
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " ")
		if strings.Contains(cmd, dir) {
			left = append(left, fmt.Sprintf("process %d (%.120s)", pid, cmd))
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && !base.netns[ns] {
			left = append(left, fmt.Sprintf("process %d in network namespace %s that did not exist before the run (%.120s)", pid, ns, cmd))
		}
	}
	// Mounts: below the directory, and namespace mounts anywhere.
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
				left = append(left, "mount "+fields[4])
			}
		}
		f.Close()
	}
	if now, err := nsfsMounts(); err == nil {
		for m := range now {
			if !base.nsfsMounts[m] {
				left = append(left, "namespace mount "+m)
			}
		}
	}
	// nftables tables and links of the host's own namespace (the node's
	// live in its namespace, which must be gone).
	if out, err := exec.Command("nft", "list", "tables").Output(); err == nil && string(out) != base.nftTables {
		left = append(left, fmt.Sprintf("host nftables tables changed: before %q, after %q", base.nftTables, string(out)))
	}
	for _, l := range hostLinks() {
		if !base.links[l] {
			left = append(left, "host link "+l)
		}
	}
	if fwd, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); strings.TrimSpace(string(fwd)) != base.ipForward {
		left = append(left, fmt.Sprintf("host net.ipv4.ip_forward changed from %s to %s", base.ipForward, strings.TrimSpace(string(fwd))))
	}
	// cgroups of the node.
	if id := nodeID(dir); id != "" {
		matches, _ := filepath.Glob("/sys/fs/cgroup/*/localcluster-" + id)
		matches2, _ := filepath.Glob("/sys/fs/cgroup/localcluster-" + id)
		for _, m := range append(matches, matches2...) {
			left = append(left, "cgroup "+m)
		}
	}
	for s := range dirEntries("/run/containerd/s") {
		if !base.shimSocks[s] {
			left = append(left, "shim socket /run/containerd/s/"+s)
		}
	}
	sort.Strings(left)
	return left
}

// nodeID reads the real node's id from the cluster's state.json.
func nodeID(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return ""
	}
	var st struct {
		NodeID string `json:"nodeID"`
	}
	_ = json.Unmarshal(data, &st)
	return st.NodeID
}

func processNetns() map[string]bool {
	set := map[string]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if ns, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil {
			set[ns] = true
		}
	}
	return set
}

func nsfsMounts() (map[string]bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if _, after, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(after, "nsfs ") {
			fields := strings.Fields(line)
			set[fields[4]] = true
		}
	}
	return set, sc.Err()
}

func hostLinks() []string {
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		return nil
	}
	var links []string
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 {
			links = append(links, strings.TrimSuffix(strings.SplitN(fields[1], "@", 2)[0], ":"))
		}
	}
	return links
}

func dirEntries(dir string) map[string]bool {
	set := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		set[e.Name()] = true
	}
	return set
}

// requireEnv skips a test when the environment does not run.
func requireEnv(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// kill ends a helper process and reaps it.
func kill(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// nftQueueSupported reports whether the kernel accepts nftables' queue
// statement, probed in a throw-away network namespace.
func nftQueueSupported() (bool, error) {
	out, err := exec.Command("unshare", "--net", "sh", "-c",
		"nft add table inet probe && nft add chain inet probe c '{ type filter hook postrouting priority 0; }' && nft add rule inet probe c meta l4proto 255 queue num 100 bypass").CombinedOutput()
	if err == nil {
		return true, nil
	}
	if strings.Contains(string(out), "No such file or directory") {
		return false, nil
	}
	return false, fmt.Errorf("probing nftables' queue statement: %w: %s", err, strings.TrimSpace(string(out)))
}
