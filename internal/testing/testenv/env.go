package testenv

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
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/realcontroller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// Environment variables of the contract described in the package comment.
const (
	KubeconfigVar      = "AGENTSANDBOX_TEST_KUBECONFIG"
	LocalclusterBinVar = "AGENTSANDBOX_LOCALCLUSTER_BIN"
	NoControllerVar    = "AGENTSANDBOX_TEST_NO_CONTROLLER"
	NoCRDsVar          = "AGENTSANDBOX_TEST_NO_CRDS"
	KeepVar            = "AGENTSANDBOX_TEST_KEEP"
	// ProfileVar names the upstream release the environment runs (package
	// releases: v0.5.0 ... v1.0.3); empty means releases.Default, the newest.
	// It selects the CRDs installed and the controller built and run, and is
	// passed on to the processes of the run so tests can read it
	// (ProfileFromEnv).
	ProfileVar = "AGENTSANDBOX_TEST_RELEASE"
	// MarkerVar is set to the run id on every process a run starts. Its
	// presence also tells a nested harness (acctest.Main inside a test
	// binary started by the testenv command) that the environment is
	// already up and must not be started again.
	MarkerVar = "AGENTSANDBOX_TESTENV_RUN"
)

// ModulePath identifies the repository root when searching upwards for go.mod.
const ModulePath = "github.com/agentsandbox/terraform-provider-agentsandbox"

// Bounds on each phase. They are generous because a loaded 2-core machine
// (another package's cluster, a compiler) can be several times slower than
// the measured times, and a hung phase must still end the run.
const (
	upTimeout         = 4 * time.Minute
	downTimeout       = 2 * time.Minute
	crdTimeout        = time.Minute
	controllerTimeout = 2 * time.Minute
	leakGrace         = 5 * time.Second
)

// Options say what environment to bring up. The zero value plus RepoRoot
// starts a local cluster with CRDs and no controller.
type Options struct {
	// RepoRoot is the repository checkout, needed only to start a local
	// cluster: the run directory goes below RepoRoot/.cache/testenv and
	// build.sh is RepoRoot/internal/devenv/localcluster/build.sh.
	RepoRoot string
	// Kubeconfig names an existing cluster to use; empty starts the local
	// control plane.
	Kubeconfig string
	// LocalclusterBin is the localcluster binary; empty builds it with
	// build.sh (a cold build takes ~10 minutes, then it is cached).
	LocalclusterBin string
	// Dir is the run directory of the local cluster; empty means a fresh
	// one below RepoRoot/.cache/testenv. A long-lived environment (the
	// local demo keeps its state in .cache/demo) names a fixed one.
	Dir string
	// NoCRDs skips installing the agent-sandbox CRDs.
	NoCRDs bool
	// Profile is the upstream release the environment runs: its CRDs are
	// installed as the release ships them (for a v0.5.x release with the
	// v1alpha1 version and a conversion webhook, which the release's
	// controller serves; on the local cluster the CRDs reach it through the
	// release's own webhook Service, see serviceRoute). nil installs the
	// CRDs of releases.Default. The Controller is chosen separately
	// (RealController).
	Profile *releases.Profile
	// Controller is run for the environment; nil runs none.
	Controller Controller
	// ControllerWait bounds how long Start waits for the controller to
	// reconcile: 0 means 30 s, a negative value means not at all. The
	// latter is for a controller that cannot reconcile yet because the
	// CRDs are installed later, by the configuration under test (NoCRDs),
	// rather than by the harness.
	ControllerWait time.Duration
	// Keep leaves the run directory in place after a successful teardown.
	// It is always kept after a failure, for its logs.
	Keep bool
	// Log receives progress and timings; nil means os.Stderr.
	Log io.Writer
}

// OptionsFromEnv reads the options from the environment variables listed in
// the package comment, with the repository found from the working
// directory. The controller is the release's own (RealController) unless
// AGENTSANDBOX_TEST_NO_CONTROLLER=1.
func OptionsFromEnv() (Options, error) {
	root, err := FindRepoRoot()
	if err != nil {
		return Options{}, err
	}
	o := Options{
		RepoRoot:        root,
		LocalclusterBin: os.Getenv(LocalclusterBinVar),
		NoCRDs:          os.Getenv(NoCRDsVar) == "1",
		Keep:            os.Getenv(KeepVar) == "1",
	}
	p, err := ProfileFromEnv()
	if err != nil {
		return Options{}, err
	}
	o.Profile = &p
	if os.Getenv(NoControllerVar) != "1" {
		o.Controller = RealController(p, root)
	}
	o.Kubeconfig, err = GivenKubeconfig()
	return o, err
}

// ProfileFromEnv returns the release profile named by ProfileVar
// (releases.Default when unset).
func ProfileFromEnv() (releases.Profile, error) {
	return releases.Lookup(os.Getenv(ProfileVar))
}

// GivenKubeconfig returns the kubeconfig the caller named: the
// AGENTSANDBOX_TEST_KUBECONFIG file, else KUBECONFIG. When KUBECONFIG is a
// list, its first existing file is used, because the provider under test
// is pointed at one file (config_path). "" means none was given.
func GivenKubeconfig() (string, error) {
	if p := os.Getenv(KubeconfigVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", KubeconfigVar, err)
		}
		return filepath.Abs(p)
	}
	list := os.Getenv("KUBECONFIG")
	if list == "" {
		return "", nil
	}
	for _, p := range filepath.SplitList(list) {
		if _, err := os.Stat(p); err == nil {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("KUBECONFIG=%q names no existing file", list)
}

// Managed reports whether this process runs inside an environment started
// by a harness further up (its marker is in the environment).
func Managed() bool { return os.Getenv(MarkerVar) != "" }

// FindRepoRoot walks up from the working directory to the go.mod of this
// module. Tests run in their package directory and the testenv command in
// whatever directory make runs it from, so neither can assume ".".
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", ModulePath)
		}
		dir = parent
	}
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == ModulePath
		}
	}
	return false
}

// Env is a running environment. Stop it exactly once (further calls return
// the first result).
type Env struct {
	// Kubeconfig is the absolute path of the cluster's kubeconfig.
	Kubeconfig string
	// RunID identifies the run; it is the value of MarkerVar.
	RunID string
	// Dir is the run directory (local cluster only, else "").
	Dir string

	opts     Options
	log      io.Writer
	started  time.Time
	bin      string // localcluster binary, "" for a given cluster
	watchdog *watchdog
	ctrl     *runningController
	route    *serviceRoute
	host     Host // what the controller is given
	mem      *memorySampler

	stopOnce sync.Once
	stopErr  error
}

// Start brings up the environment described by opts and returns once the
// cluster answers, the CRDs are Established and the controller runs. On
// failure everything already started is stopped again, and the returned
// error includes any teardown failure (e.g. leaked processes).
func Start(ctx context.Context, opts Options) (*Env, error) {
	e := &Env{opts: opts, log: opts.Log, started: time.Now(), RunID: newRunID()}
	if e.log == nil {
		e.log = os.Stderr
	}
	if err := e.start(ctx); err != nil {
		stopErr := e.Stop(context.WithoutCancel(ctx))
		return nil, errors.Join(err, stopErr)
	}
	return e, nil
}

func (e *Env) start(ctx context.Context) error {
	if e.opts.Kubeconfig != "" {
		e.Kubeconfig = e.opts.Kubeconfig
		e.logf("using the cluster of %s", e.Kubeconfig)
	} else if err := e.startLocalCluster(ctx); err != nil {
		return err
	}

	cfg, err := RESTConfig(e.Kubeconfig)
	if err != nil {
		return err
	}
	e.host = Host{Config: cfg, Kubeconfig: e.Kubeconfig, Environ: []string{e.marker()}, Log: prefixWriter(e.log, "testenv: ")}
	// Before anything waits on the controller: a cold build takes minutes
	// and is logged once.
	if err := buildController(ctx, e.opts.Controller, e.host); err != nil {
		return err
	}
	if e.opts.NoCRDs {
		e.logf("agent-sandbox CRDs not installed by the harness (Options.NoCRDs, %s=1): whatever runs inside installs them", NoCRDsVar)
	} else {
		t0 := time.Now()
		objs, err := e.crds(ctx)
		if err != nil {
			return err
		}
		if err := InstallCRDs(ctx, cfg, objs); err != nil {
			return err
		}
		if e.opts.Profile != nil {
			e.logf("%d CRDs of agent-sandbox %s established in %s", len(objs), e.opts.Profile, since(t0))
		} else {
			e.logf("%d CRDs established in %s", len(objs), since(t0))
		}
	}

	if e.opts.Controller == nil {
		e.logf("no agent-sandbox controller (%s=1)", NoControllerVar)
		return nil
	}
	if e.opts.Profile != nil && e.opts.Profile.ServesV1alpha1 {
		if e.host.WebhookPort, err = realcontroller.FreePort(); err != nil {
			return err
		}
		if err := e.routeWebhookService(ctx, cfg, e.host.WebhookPort); err != nil {
			return err
		}
	}
	if e.Dir != "" {
		e.host.Dir = filepath.Join(e.Dir, "agent-sandbox-controller")
	} else if e.host.Dir, err = os.MkdirTemp("", "agent-sandbox-controller-"); err != nil {
		return err
	}
	t0 := time.Now()
	e.ctrl = startController(ctx, e.opts.Controller, e.host)
	wait := e.opts.ControllerWait
	if wait < 0 {
		e.logf("%s started; not waiting for it to reconcile", e.opts.Controller.Name())
		return nil
	}
	if wait == 0 {
		wait = controllerTimeout
	}
	ok, err := e.ctrl.waitReconciling(ctx, wait)
	switch {
	case err != nil:
		return err
	case ok:
		e.logf("%s reconciling in %s", e.opts.Controller.Name(), since(t0))
	default:
		e.logf("%s started but not reconciling after %s", e.opts.Controller.Name(), since(t0))
	}
	return nil
}

// ReplaceController stops the environment's controller and runs c in its
// place, as a Deployment's rollout replaces one release's controller pod
// with the next release's, and waits until c reconciles (c waits for its
// CRDs first). A test of an upgrade swaps the release's binaries with it.
func (e *Env) ReplaceController(ctx context.Context, c Controller) error {
	if e.host.Config == nil {
		return errors.New("testenv: ReplaceController before Start")
	}
	if e.ctrl != nil {
		t0 := time.Now()
		if err := e.ctrl.stop(controllerTimeout); err != nil {
			return err
		}
		e.logf("%s stopped in %s", e.opts.Controller.Name(), since(t0))
		e.ctrl = nil
	}
	if e.host.Dir == "" {
		dir, err := os.MkdirTemp("", "agent-sandbox-controller-")
		if err != nil {
			return err
		}
		e.host.Dir = dir
	}
	if err := buildController(ctx, c, e.host); err != nil {
		return err
	}
	t0 := time.Now()
	e.opts.Controller = c
	e.ctrl = startController(ctx, c, e.host)
	ok, err := e.ctrl.waitReconciling(ctx, controllerTimeout)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s not reconciling after %s", c.Name(), controllerTimeout)
	}
	e.logf("%s reconciling in %s", c.Name(), since(t0))
	return nil
}

// buildController builds c's binary if it has one to build (RealController).
func buildController(ctx context.Context, c Controller, h Host) error {
	if b, ok := c.(interface {
		build(context.Context, Host) error
	}); ok {
		return b.build(ctx, h)
	}
	return nil
}

func (e *Env) startLocalCluster(ctx context.Context) error {
	if e.opts.RepoRoot == "" {
		return errors.New("testenv: RepoRoot is required to start a local cluster")
	}
	bin, err := e.localclusterBinary(ctx)
	if err != nil {
		return err
	}
	e.bin = bin
	e.Dir = e.opts.Dir
	if e.Dir == "" {
		e.Dir = filepath.Join(e.opts.RepoRoot, ".cache", "testenv", e.RunID)
	} else if e.Dir, err = filepath.Abs(e.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	// The watchdog must be running before the first cluster process exists,
	// so that no moment is left in which dying would leak the cluster.
	if e.watchdog, err = startWatchdog(watchdogConfig{Dir: e.Dir, Bin: bin, Marker: e.marker()}); err != nil {
		return err
	}

	t0 := time.Now()
	uctx, cancel := context.WithTimeout(ctx, upTimeout)
	defer cancel()
	var stdout bytes.Buffer
	// up's own bound (default 2 min) is raised to just under ours so that
	// up, not our kill, reports what it was waiting for on a slow machine.
	cmd := exec.CommandContext(uctx, bin, "up", "--dir", e.Dir, "--timeout", (upTimeout - 15*time.Second).String())
	cmd.Env = append(os.Environ(), e.marker())
	cmd.Stdout = &stdout
	cmd.Stderr = prefixWriter(e.log, "  ")
	// up returns once the cluster is usable; its supervisor detaches into a
	// session of its own, so waiting for up does not wait for the cluster.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("localcluster up --dir %s: %w", e.Dir, err)
	}
	e.Kubeconfig = lastLine(stdout.String())
	if e.Kubeconfig == "" {
		return fmt.Errorf("localcluster up --dir %s printed no kubeconfig path", e.Dir)
	}
	e.logf("cluster up in %s (%s)", since(t0), e.Dir)
	e.mem = startMemorySampler(e.Dir)
	return nil
}

// localclusterBinary returns the configured binary, or builds it: build.sh
// prints progress on stderr and the binary's path as its last stdout line.
func (e *Env) localclusterBinary(ctx context.Context) (string, error) {
	if b := e.opts.LocalclusterBin; b != "" {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Errorf("%s: %w", LocalclusterBinVar, err)
		}
		return filepath.Abs(b)
	}
	script := filepath.Join(e.opts.RepoRoot, "internal", "devenv", "localcluster", "build.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("cannot start a local cluster: %s is missing (%w); set KUBECONFIG to use an existing cluster", script, err)
	}
	t0 := time.Now()
	e.logf("getting the localcluster binary from %s (a cold build takes ~10 min; then it is cached)", script)
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Dir = e.opts.RepoRoot
	cmd.Stdout = &stdout
	cmd.Stderr = prefixWriter(e.log, "  ")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	bin := lastLine(stdout.String())
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s printed %q, which is not a file: %w", script, bin, err)
	}
	e.logf("localcluster binary ready in %s (%s)", since(t0), bin)
	return bin, nil
}

// Vars returns the variables that place a process inside the environment,
// in os/exec's "KEY=value" form.
func (e *Env) Vars() []string {
	vars := []string{
		"KUBECONFIG=" + e.Kubeconfig,
		KubeconfigVar + "=" + e.Kubeconfig,
		e.marker(),
	}
	if e.opts.Profile != nil {
		vars = append(vars, ProfileVar+"="+e.opts.Profile.Name)
	}
	return vars
}

// Environ returns this process's environment with Vars replacing any
// earlier values: the environment for a command run inside the environment.
func (e *Env) Environ() []string {
	return append(environWithout(os.Environ(), "KUBECONFIG", KubeconfigVar, MarkerVar, ProfileVar), e.Vars()...)
}

func (e *Env) marker() string { return MarkerVar + "=" + e.RunID }

// Stop tears the environment down: stops the controller, runs
// `localcluster down`, then looks for any process of the run still alive.
// Leftovers are killed and reported in the returned error. The run
// directory is removed unless something failed or Keep is set.
func (e *Env) Stop(ctx context.Context) error {
	e.stopOnce.Do(func() { e.stopErr = e.stop(ctx) })
	return e.stopErr
}

func (e *Env) stop(ctx context.Context) error {
	t0 := time.Now()
	var errs []error
	if e.ctrl != nil {
		if err := e.ctrl.stop(controllerTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if err := e.route.stop(); err != nil {
		errs = append(errs, fmt.Errorf("stopping the webhook Service route: %w", err))
	}
	if e.mem != nil {
		e.logf("%s", e.mem.stop().summary())
	}
	if e.bin != "" {
		dctx, cancel := context.WithTimeout(ctx, downTimeout)
		cmd := exec.CommandContext(dctx, e.bin, "down", "--dir", e.Dir)
		cmd.Stdout = prefixWriter(e.log, "  ")
		cmd.Stderr = prefixWriter(e.log, "  ")
		if err := cmd.Run(); err != nil {
			errs = append(errs, fmt.Errorf("localcluster down --dir %s: %w", e.Dir, err))
		}
		cancel()
	}
	if err := e.checkLeaks(); err != nil {
		errs = append(errs, err)
	}
	if e.watchdog != nil {
		if err := e.watchdog.release(); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	if e.Dir != "" {
		switch {
		case err != nil:
			e.logf("kept %s for inspection (component logs in %s)", e.Dir, filepath.Join(e.Dir, "logs"))
		case e.opts.Keep:
			e.logf("kept %s (%s=1)", e.Dir, KeepVar)
		case e.opts.Dir != "":
			// A directory the caller chose may hold more than this run
			// wrote; `localcluster up` replaces its own files there.
			e.logf("left %s in place (chosen by the caller)", e.Dir)
		default:
			if rerr := os.RemoveAll(e.Dir); rerr != nil {
				err = rerr
			}
		}
	}
	e.logf("teardown in %s", since(t0))
	return err
}

// checkLeaks fails loudly if any process of the run outlived teardown. A
// short grace covers processes that are already exiting (SIGTERMed by their
// parent a moment ago); anything older is a defect in whatever started it.
func (e *Env) checkLeaks() error {
	m := procMatcher{marker: e.marker(), dir: e.Dir, exclude: map[int]bool{os.Getpid(): true}}
	if e.watchdog != nil {
		m.exclude[e.watchdog.pid()] = true
	}
	var left []Process
	deadline := time.Now().Add(time.Second)
	clean := 0
	for {
		var err error
		if left, err = scanProcesses("/proc", m); err != nil {
			return fmt.Errorf("scanning /proc for leftover processes: %w", err)
		}
		if len(left) == 0 {
			// Two clean scans 100 ms apart: a process caught in the middle
			// of an exec (its environ and cmdline briefly unreadable, as
			// for a detached `setsid sleep` started just before the
			// command exited) is skipped by one scan, not by two.
			if clean++; clean == 2 {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		clean = 0
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d process(es) of run %s were still running after teardown and have been killed:", len(left), e.RunID)
	for _, p := range left {
		fmt.Fprintf(&b, "\n\t%s", p)
	}
	e.logf("LEAK: %s", b.String())
	if survivors := killProcesses(left, leakGrace); len(survivors) > 0 {
		fmt.Fprintf(&b, "\n%d survived SIGKILL", len(survivors))
	}
	return errors.New(b.String())
}

func (e *Env) logf(format string, args ...any) {
	fmt.Fprintf(e.log, "testenv: "+format+"\n", args...)
}

// RESTConfig loads a kubeconfig file the way the tests and the controller
// use it. The rate limit is raised well above client-go's default of 5 QPS,
// which would otherwise throttle a test suite against a private cluster.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// newRunID returns 8 random hex digits: unique enough for concurrent runs on
// one machine, and short because the run directory ends up in unix socket
// paths, which are limited to 107 bytes.
func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails on Linux
	return hex.EncodeToString(b)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func since(t time.Time) time.Duration {
	d := time.Since(t)
	if d > 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// prefixWriter indents a child's output so that it reads as nested under
// the harness's own lines. Writes are serialised: os/exec may write stdout
// and stderr from two goroutines.
func prefixWriter(w io.Writer, prefix string) io.Writer {
	return &linePrefixer{w: w, prefix: prefix, atStart: true}
}

type linePrefixer struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	atStart bool
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out bytes.Buffer
	for _, c := range b {
		if p.atStart {
			out.WriteString(p.prefix)
			p.atStart = false
		}
		out.WriteByte(c)
		if c == '\n' {
			p.atStart = true
		}
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
