package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A kubeconfig that parses but points nowhere reachable: these tests never
// contact a cluster.
const dummyKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

func writeKubeconfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(dummyKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStart_GivenCluster_ControllerLifecycle checks the given-cluster path
// end to end without a cluster: the controller is started with the
// kubeconfig's rest.Config, Start waits until it reconciles, and Stop
// cancels it and reports no leak.
func TestStart_GivenCluster_ControllerLifecycle(t *testing.T) {
	kc := writeKubeconfig(t)
	var gotHost string
	stopped := make(chan struct{})
	ctrl := ControllerFunc{Label: "fake", Fn: func(ctx context.Context, h Host, reconciling func()) error {
		cfg := h.Config
		gotHost = cfg.Host
		reconciling()
		reconciling() // a second leadership must not panic
		<-ctx.Done()
		close(stopped)
		return nil
	}}
	var log bytes.Buffer
	env, err := Start(context.Background(), Options{Kubeconfig: kc, NoCRDs: true, Controller: ctrl, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if gotHost != "https://127.0.0.1:1" {
		t.Errorf("controller got host %q", gotHost)
	}
	if env.Kubeconfig != kc || env.Dir != "" || len(env.RunID) != 8 {
		t.Errorf("env = %+v", env)
	}
	if err := env.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v\nlog:\n%s", err, log.String())
	}
	select {
	case <-stopped:
	default:
		t.Error("controller was not cancelled")
	}
	if err := env.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for _, want := range []string{"testenv: using the cluster of " + kc, "fake reconciling in", "teardown in"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// A controller that dies while the tests run makes their results suspect;
// the run must fail rather than pass quietly.
func TestStop_ReportsControllerThatDiedEarly(t *testing.T) {
	kc := writeKubeconfig(t)
	died := make(chan struct{})
	ctrl := ControllerFunc{Label: "flaky", Fn: func(ctx context.Context, _ Host, reconciling func()) error {
		reconciling()
		defer close(died)
		return errors.New("lost the lease and gave up")
	}}
	env, err := Start(context.Background(), Options{Kubeconfig: kc, NoCRDs: true, Controller: ctrl, Log: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	<-died
	time.Sleep(10 * time.Millisecond) // let the goroutine record the error
	err = env.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "failed while the tests ran: lost the lease") {
		t.Fatalf("Stop = %v", err)
	}
}

func TestStart_ControllerFailingAtStartup(t *testing.T) {
	kc := writeKubeconfig(t)
	ctrl := ControllerFunc{Label: "broken", Fn: func(context.Context, Host, func()) error {
		return errors.New("bad scheme")
	}}
	_, err := Start(context.Background(), Options{Kubeconfig: kc, NoCRDs: true, Controller: ctrl, Log: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "stopped during start-up: bad scheme") {
		t.Fatalf("Start = %v", err)
	}
}

func TestStart_LocalClusterWithoutBuildScript(t *testing.T) {
	root := t.TempDir()
	_, err := Start(context.Background(), Options{RepoRoot: root, Log: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "build.sh is missing") || !strings.Contains(err.Error(), "set KUBECONFIG") {
		t.Fatalf("Start = %v", err)
	}
}

// TestStart_LocalClusterWithFakeBinary drives the local-cluster path with a
// shell script standing in for localcluster: `up` leaves a detached process
// behind that names the run directory and `down` "forgets" to stop it. The
// harness must find it, kill it, fail the teardown and keep the directory.
func TestStart_LocalClusterWithFakeBinary(t *testing.T) {
	root := t.TempDir()
	bin := writeFakeLocalcluster(t, root)
	var log bytes.Buffer
	env, err := Start(context.Background(), Options{RepoRoot: root, LocalclusterBin: bin, NoCRDs: true, Log: &log})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, log.String())
	}
	if want := filepath.Join(root, ".cache", "testenv", env.RunID); env.Dir != want {
		t.Errorf("Dir = %s, want %s", env.Dir, want)
	}
	if env.Kubeconfig != filepath.Join(env.Dir, "kubeconfig") {
		t.Errorf("Kubeconfig = %s", env.Kubeconfig)
	}
	if !strings.Contains(log.String(), "  starting in "+env.Dir) {
		t.Errorf("up's stderr not relayed (indented):\n%s", log.String())
	}
	err = env.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "process(es) of run "+env.RunID) || !strings.Contains(err.Error(), env.Dir+"/component") {
		t.Fatalf("Stop = %v\nlog:\n%s", err, log.String())
	}
	left, _ := scanProcesses("/proc", procMatcher{dir: env.Dir})
	if len(left) != 0 {
		t.Errorf("still running after Stop: %v", left)
	}
	if _, err := os.Stat(env.Dir); err != nil {
		t.Errorf("run directory removed after a failed teardown: %v", err)
	}
	if !strings.Contains(log.String(), "LEAK:") || !strings.Contains(log.String(), "kept "+env.Dir) {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestStart_FixedDirNoControllerWait covers what a long-lived environment
// (the local demo) uses: a run directory of its choosing, a controller that
// is started but not awaited (it cannot reconcile before the CRDs exist),
// and Leftovers, the leak check a separate process can make.
func TestStart_FixedDirNoControllerWait(t *testing.T) {
	root := t.TempDir()
	bin := writeFakeLocalcluster(t, root)
	dir := filepath.Join(root, "demo", "cluster")
	ctrl := ControllerFunc{Label: "waits for CRDs", Fn: func(ctx context.Context, _ Host, _ func()) error {
		<-ctx.Done() // never reconciles
		return nil
	}}
	var log bytes.Buffer
	t0 := time.Now()
	env, err := Start(context.Background(), Options{RepoRoot: root, LocalclusterBin: bin, Dir: dir, NoCRDs: true,
		Controller: ctrl, ControllerWait: -1, Log: &log})
	if err != nil {
		t.Fatalf("Start: %v\n%s", err, log.String())
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("Start took %s: it waited for the controller", d)
	}
	if env.Dir != dir {
		t.Errorf("Dir = %s, want %s", env.Dir, dir)
	}
	if !strings.Contains(log.String(), "not waiting for it to reconcile") {
		t.Errorf("log:\n%s", log.String())
	}
	left, err := Leftovers(env.RunID, env.Dir)
	if err != nil || len(left) == 0 {
		t.Errorf("Leftovers while running = %v, %v; want the fake component", left, err)
	}
	if err := env.Stop(context.Background()); err == nil {
		t.Error("Stop reported no leak of the fake component")
	}
	// A `sleep 0.05` the killed loop had started may outlive it briefly.
	var left2 []Process
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left2, _ = Leftovers(env.RunID, env.Dir); len(left2) == 0 {
			return
		}
	}
	t.Errorf("Leftovers after Stop = %v", left2)
}

// writeFakeLocalcluster writes a shell script that stands in for the
// localcluster binary: `up` starts a detached "component" whose command line
// names the run directory and writes a kubeconfig; `down` stops nothing.
func writeFakeLocalcluster(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "fake-localcluster")
	script := `#!/bin/sh
set -e
cmd=$1; dir=$3
case $cmd in
up)
  cat > "$dir/kubeconfig" <<'EOF'
` + dummyKubeconfig + `EOF
  setsid sh -c 'while :; do sleep 0.05; done' "$dir/component" </dev/null >/dev/null 2>&1 &
  echo "starting in $dir" >&2
  echo "$dir/kubeconfig" ;;
down)
  echo "stopped (not really)" >&2 ;;
esac
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestWatchdog_HarnessKilled is the real thing: a child test process starts
// an environment (watchdog included, since this package's TestMain installs
// the hook) and then SIGKILLs itself. The watchdog must notice, stop the
// cluster's processes and say so in watchdog.log.
func TestWatchdog_HarnessKilled(t *testing.T) {
	if os.Getenv("TESTENV_HELPER_ROOT") != "" {
		t.Skip("helper process")
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHarnessDies$", "-test.v")
	cmd.Env = append(os.Environ(), "TESTENV_HELPER_ROOT="+root, "TESTENV_HELPER_BIN="+writeFakeLocalcluster(t, root))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper did not die of SIGKILL: %v\n%s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "RUNDIR=")
	if !ok {
		t.Fatalf("helper printed no run dir:\n%s", out)
	}
	dir := strings.Fields(after)[0]
	deadline := time.Now().Add(15 * time.Second)
	for {
		left, err := scanProcesses("/proc", procMatcher{dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = killProcesses(left, time.Second)
			t.Fatalf("the watchdog left %v running", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The watchdog may still be writing its last line.
	var log []byte
	for time.Now().Before(deadline) {
		log, _ = os.ReadFile(filepath.Join(dir, "watchdog.log"))
		if strings.Contains(string(log), "watchdog: done") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{"exited without tearing down", "stopped (not really)", "killing leftover pid", "watchdog: done"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("watchdog.log lacks %q:\n%s", want, log)
		}
	}
}

// TestHelperHarnessDies is the child of TestWatchdog_HarnessKilled.
func TestHelperHarnessDies(t *testing.T) {
	root := os.Getenv("TESTENV_HELPER_ROOT")
	if root == "" {
		t.Skip("runs only as the helper of TestWatchdog_HarnessKilled")
	}
	env, err := Start(context.Background(), Options{RepoRoot: root, LocalclusterBin: os.Getenv("TESTENV_HELPER_BIN"), NoCRDs: true, Log: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("RUNDIR=%s\n", env.Dir)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestWatchdog_CleansUpAfterHarnessDeath runs the watchdog logic with a
// parent that "dies" (closes the pipe without the done message) while a
// process of the run is alive.
func TestWatchdog_CleansUpAfterHarnessDeath(t *testing.T) {
	marker := MarkerVar + "=wd" + newRunID()
	cmd := exec.Command("sh", "-c", "while :; do sleep 0.05; done")
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	spec := `{"dir":"/nonexistent/testenv/wd","marker":"` + marker + `"}`
	var wlog bytes.Buffer
	if code := runWatchdog(spec, strings.NewReader(""), &wlog); code != 0 {
		t.Errorf("runWatchdog = %d", code)
	}
	if !strings.Contains(wlog.String(), "exited without tearing down") || !strings.Contains(wlog.String(), "killing leftover pid") {
		t.Errorf("watchdog log:\n%s", wlog.String())
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the run's process survived the watchdog")
	}
}

func TestWatchdog_ReleasedCleanly(t *testing.T) {
	marker := MarkerVar + "=wd" + newRunID()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	spec := `{"dir":"/nonexistent","marker":"` + marker + `"}`
	var wlog bytes.Buffer
	if code := runWatchdog(spec, strings.NewReader(watchdogDone), &wlog); code != 0 {
		t.Errorf("runWatchdog = %d", code)
	}
	if !processAlive("/proc", cmd.Process.Pid) {
		t.Error("a released watchdog killed a process")
	}
}

func TestSandboxCRDs(t *testing.T) {
	objs, err := SandboxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		if o.GetAPIVersion() != "apiextensions.k8s.io/v1" || o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s: %s %s", o.GetName(), o.GetAPIVersion(), o.GetKind())
		}
		if _, found := o.Object["status"]; found {
			t.Errorf("%s: status is sent", o.GetName())
		}
		names = append(names, o.GetName())
	}
	want := "sandboxclaims.extensions.agents.x-k8s.io sandboxes.agents.x-k8s.io sandboxtemplates.extensions.agents.x-k8s.io sandboxwarmpools.extensions.agents.x-k8s.io"
	sort.Strings(names)
	if got := strings.Join(names, " "); got != want {
		t.Errorf("CRDs = %s", got)
	}
}

func TestCRDEstablished(t *testing.T) {
	crd := func(conds ...map[string]any) *unstructured.Unstructured {
		list := make([]any, len(conds))
		for i, c := range conds {
			list[i] = c
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
	}
	cond := func(typ, status, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": msg}
	}
	if ok, why := crdEstablished(crd()); ok || why != "no Established condition yet" {
		t.Errorf("no conditions: %v %q", ok, why)
	}
	if ok, _ := crdEstablished(crd(cond("NamesAccepted", "True", ""), cond("Established", "True", ""))); !ok {
		t.Error("established CRD not recognised")
	}
	ok, why := crdEstablished(crd(cond("NamesAccepted", "False", `"swp" is already in use`), cond("Established", "False", "not all names are accepted")))
	if ok || !strings.Contains(why, `NamesAccepted=False ("swp" is already in use)`) {
		t.Errorf("conflicting names: %v %q", ok, why)
	}
}

func TestLinePrefixer(t *testing.T) {
	var buf bytes.Buffer
	w := prefixWriter(&buf, "> ")
	for _, chunk := range []string{"a", "b\nc", "\n", "\nd\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := buf.String(), "> ab\n> c\n> \n> d\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLastLineAndEnviron(t *testing.T) {
	if got := lastLine("progress\n/x/kubeconfig\n\n"); got != "/x/kubeconfig" {
		t.Errorf("lastLine = %q", got)
	}
	if got := lastLine(""); got != "" {
		t.Errorf("lastLine(empty) = %q", got)
	}
	got := environWithout([]string{"A=1", "KUBECONFIG=/old", "B=x=y", "KUBECONFIGX=keep"}, "KUBECONFIG")
	if strings.Join(got, " ") != "A=1 B=x=y KUBECONFIGX=keep" {
		t.Errorf("environWithout = %v", got)
	}
	e := &Env{Kubeconfig: "/k", RunID: "r1"}
	t.Setenv("KUBECONFIG", "/old")
	t.Setenv(MarkerVar, "outer")
	env := strings.Join(e.Environ(), "\n")
	for _, want := range []string{"KUBECONFIG=/k", KubeconfigVar + "=/k", MarkerVar + "=r1"} {
		if !strings.Contains(env, want) {
			t.Errorf("Environ lacks %s", want)
		}
	}
	if strings.Contains(env, "/old") || strings.Contains(env, "outer") {
		t.Error("Environ kept the outer values")
	}
}

func TestGivenKubeconfig(t *testing.T) {
	kc := writeKubeconfig(t)
	t.Setenv(KubeconfigVar, "")
	t.Setenv("KUBECONFIG", "")
	if got, err := GivenKubeconfig(); got != "" || err != nil {
		t.Errorf("none: %q %v", got, err)
	}
	t.Setenv("KUBECONFIG", "/does/not/exist"+string(filepath.ListSeparator)+kc)
	if got, err := GivenKubeconfig(); got != kc || err != nil {
		t.Errorf("list: %q %v", got, err)
	}
	t.Setenv(KubeconfigVar, "/does/not/exist")
	if _, err := GivenKubeconfig(); err == nil {
		t.Error("a missing AGENTSANDBOX_TEST_KUBECONFIG was accepted")
	}
}

func TestFindRepoRoot(t *testing.T) {
	root, err := FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testing", "testenv")); err != nil {
		t.Errorf("root %s does not contain this package: %v", root, err)
	}
	// internal/devenv/localcluster has a go.mod of its own, for another module.
	if isModuleRoot(filepath.Join(root, "internal", "devenv", "localcluster", "go.mod")) {
		t.Error("localcluster's go.mod taken for the repository root")
	}
}
