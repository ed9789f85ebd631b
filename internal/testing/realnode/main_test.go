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

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
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
	results = &probeResults{}
)

// enforcerChains are the chains of kube-router's network policy
// controller (the real node's enforcer, see localcluster's netPolComponent).
var enforcerChains = []string{"KUBE-ROUTER-INPUT", "KUBE-ROUTER-FORWARD", "KUBE-ROUTER-OUTPUT"}

// probeResults records every probe's outcome, written as JSON at the end
// (ResultsVar) so that other checks can be compared with the verdicts.
type probeResults struct {
	mu   sync.Mutex
	list []ProbeResult
}

// ProbeResult is a probe and what it got.
type ProbeResult struct {
	Probe
	Passed bool   `json:"passed"`
	Got    string `json:"got"`
}

func (r *probeResults) add(p Probe, ok bool, got string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, ProbeResult{Probe: p, Passed: ok, Got: got})
}

// MetricsAddrVar, when set, is the address (host:port) the real
// controller serves its Prometheus metrics on (scripts/bench-claims.sh);
// unset, the controller serves none, as in every other run.
const MetricsAddrVar = "AGENTSANDBOX_E2E_CONTROLLER_METRICS"

// ResultsVar names the file the probe results are written to
// (scripts/testacc-e2e.sh: .cache/e2e/probes.json).
const ResultsVar = "AGENTSANDBOX_E2E_RESULTS"

// writeResults writes the probe results; every probe of Probes must have
// run.
func writeResults(t *testing.T) {
	t.Helper()
	results.mu.Lock()
	defer results.mu.Unlock()
	if len(results.list) != len(Probes) {
		t.Errorf("%d probe results, want one for each of the %d probes", len(results.list), len(Probes))
	}
	path := os.Getenv(ResultsVar)
	if path == "" {
		return
	}
	data, err := json.MarshalIndent(results.list, "", "  ")
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		t.Errorf("writing %s: %v", path, err)
	}
}

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

// failed counts the checks that did not pass.
func (c *checkLog) failed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.lines {
		if !strings.HasPrefix(l, "  PASS") {
			n++
		}
	}
	return n
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
		// Asked to run (make testacc-e2e, CI) on a machine that cannot:
		// that is a failure, never a silent skip.
		fmt.Fprintf(os.Stderr, "e2e: FAIL: this machine cannot run the real node: %s\n", reason)
		return 1
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
			fmt.Fprintf(os.Stderr, "e2e: stopping the cluster and the controller: %v\n", err)
			code = 1
		}
	}
	if code2 := stopCluster(baseline, code == 0); code2 != 0 {
		code = code2
	}
	fmt.Fprintf(os.Stderr, "\ne2e: checks (%d):\n%s\n", len(summary.lines), strings.Join(summary.lines, "\n"))
	if failed := summary.failed(); failed > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: %d check(s) did not pass\n", failed)
		code = 1
	}
	return code
}

// DebianPackages are what the run needs from Debian (scripts/testacc-e2e.sh
// and CI install them).
var DebianPackages = []string{"containerd", "runc", "containernetworking-plugins", "iptables", "ipset", "iproute2", "util-linux",
	"debootstrap", "gcc", "libc6-dev", "patch"}

// preflight says what this machine lacks for the real node, or "".
func preflight() string {
	var missing []string
	if os.Geteuid() != 0 {
		return "not root (the node needs network namespaces, mounts and cgroups)"
	}
	for _, tool := range []string{"containerd", "runc", "ctr", "nsenter", "unshare", "ip", "iptables", "iptables-save", "iptables-restore", "ipset",
		"gcc", "debootstrap", "apt-get", "dpkg-deb", "patch", "terraform"} {
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
		return "missing " + strings.Join(missing, ", ") + " (Debian: apt-get install " + strings.Join(DebianPackages, " ") + "; terraform on PATH)"
	}
	// Kernel features, checked in a throw-away network namespace: bridged
	// traffic through netfilter (policy between pods on the node's bridge),
	// and what the enforcer's rules use: ipsets (hash:ip, hash:net) matched
	// from iptables, physdev, comment, mark, addrtype, multiport, NFLOG.
	out, err := exec.Command("unshare", "--net", "sh", "-c", `set -e
test -e /proc/sys/net/bridge/bridge-nf-call-iptables || { echo "no br_netfilter (net.bridge.bridge-nf-call-iptables)"; exit 1; }
ipset create probe-ip hash:ip && ipset create probe-net hash:net
iptables -w 5 -N PROBE
iptables -w 5 -A PROBE -m set --match-set probe-ip src -m set --match-set probe-net dst -j RETURN
iptables -w 5 -A PROBE -m physdev --physdev-is-bridged -m comment --comment probe -m mark --mark 0x10000/0x10000 -j RETURN
iptables -w 5 -A PROBE -m addrtype --dst-type LOCAL -p tcp -m multiport --dports 1:2 -j RETURN
iptables -w 5 -A PROBE -j NFLOG --nflog-group 100 && iptables -w 5 -A PROBE -j MARK --set-xmark 0x10000/0x10000
iptables -w 5 -A PROBE -j REJECT`).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("the kernel or iptables lacks what the NetworkPolicy enforcer (kube-router) uses: %v: %s", err, bytes.TrimSpace(out))
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
// real-node cluster and the release's real controller for it.
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
	fmt.Fprintf(os.Stderr, "e2e: NetworkPolicy enforcer kube-router %s (%s)\n", netpol, tNP.Round(time.Millisecond))
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

	var ctlOpts testenv.RealControllerOptions
	if addr := os.Getenv(MetricsAddrVar); addr != "" {
		// The benchmark reads upstream's claim latency metrics.
		ctlOpts.Args = []string{"--metrics-bind-address=" + addr}
	}
	return testenv.Start(ctx, testenv.Options{
		RepoRoot:   root,
		Kubeconfig: cluster.kubeconfig,
		Profile:    &releases.Default,
		Controller: testenv.RealControllerWith(releases.Default, root, ctlOpts),
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
	// The namespace holds the enforcer's rules and sets: it must be gone
	// (entering it works only while it is still mounted).
	if err := exec.Command("nsenter", "--net="+cluster.nodeNetns, "--", "true").Run(); err == nil {
		leftovers = append(leftovers, "the node's network namespace "+cluster.nodeNetns+" (with the enforcer's rules and sets) still exists")
	}
	if len(leftovers) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: the run left things behind:\n  - %s\n", strings.Join(leftovers, "\n  - "))
		summary.add("TestMain", "nothing left behind", false, strings.Join(leftovers, "; "))
		return 1
	}
	summary.add("TestMain", "nothing left behind", true,
		"no process, mount, network namespace, link, cgroup or shim socket of the run remains; the host's iptables (legacy and nft), ipsets, nftables rule set and ip_forward are unchanged")
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
	firewall   map[string]string // command -> output: iptables, ipsets, nftables
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
	if s.firewall, err = hostFirewall(); err != nil {
		return s, err
	}
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
	// Firewall state and links of the host's own namespace (the node's
	// live in its namespace, which must be gone).
	if now, err := hostFirewall(); err != nil {
		left = append(left, "reading the host's firewall: "+err.Error())
	} else {
		for cmd, before := range base.firewall {
			if now[cmd] != before {
				left = append(left, fmt.Sprintf("host %s changed:\nbefore:\n%s\nafter:\n%s", cmd, before, now[cmd]))
			}
		}
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

// hostFirewall reads the host's own iptables (both backends, without
// counters), ipsets and nftables rule set. A command that is not installed
// is skipped (iptables and ipset are required by preflight).
func hostFirewall() (map[string]string, error) {
	cmds := [][]string{
		{"iptables-legacy-save"}, {"iptables-nft-save"}, {"ip6tables-legacy-save"}, {"ip6tables-nft-save"},
		{"ipset", "list"}, {"nft", "list", "ruleset"},
	}
	out := map[string]string{}
	for _, c := range cmds {
		if _, err := exec.LookPath(c[0]); err != nil {
			continue
		}
		b, err := exec.Command(c[0], c[1:]...).Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Join(c, " "), err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			// iptables-save's comments carry a timestamp.
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		out[strings.Join(c, " ")] = strings.Join(lines, "\n")
	}
	return out, nil
}

// recordEnforcerState records what the enforcer has installed in the node
// while the policies apply: proof that it enforces with iptables rules and
// ipsets, and what the teardown checks must see gone with the node's
// namespace (the host checks compare against a run that created them).
func recordEnforcerState(t *testing.T) {
	t.Helper()
	c, err := enforcerState(cluster.nodeNetns)
	ok := err == nil && c.podChains > 0 && c.sets > 0
	detail := fmt.Sprintf("node namespace: %d KUBE-* chains with %d rules, %d of them per pod or policy (KUBE-POD-FW-*, KUBE-NWPLCY-*), %d ipsets",
		c.chains, c.rules, c.podChains, c.sets)
	if err != nil {
		detail = err.Error()
	}
	summary.add("TestE2E", "enforcer rules and sets while policies apply", ok, detail)
	if !ok {
		t.Errorf("the NetworkPolicy enforcer's state in the node: %s", detail)
	} else {
		t.Log(detail)
	}
}

// enforcerCounts is what kube-router has installed in the node.
type enforcerCounts struct{ chains, rules, podChains, sets int }

// enforcerState counts kube-router's chains, rules and ipsets inside the
// node's network namespace.
func enforcerState(netns string) (enforcerCounts, error) {
	var c enforcerCounts
	out, err := exec.Command("nsenter", "--net="+netns, "--", "iptables-save", "-t", "filter").Output()
	if err != nil {
		return c, fmt.Errorf("iptables-save in the node: %w", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, ":KUBE-"):
			c.chains++
			if strings.HasPrefix(l, ":KUBE-POD-FW-") || strings.HasPrefix(l, ":KUBE-NWPLCY-") {
				c.podChains++
			}
		case strings.HasPrefix(l, "-A KUBE-"), strings.HasPrefix(l, "-A ") && strings.Contains(l, "-j KUBE-"):
			c.rules++
		}
	}
	out, err = exec.Command("nsenter", "--net="+netns, "--", "ipset", "list", "-n").Output()
	if err != nil {
		return c, fmt.Errorf("ipset list in the node: %w", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			c.sets++
		}
	}
	return c, nil
}
