// Command bench measures this provider against the floor (terraform_data
// holding the same payloads, i.e. Terraform's own cost) and peer providers,
// side by side in one run against one cluster, phase by phase. See
// bench/README.md; `make bench` runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/selfstats"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

var runLabelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,28}[a-z0-9])?$`)

const kubectlModule = "github.com/gavinbunney/terraform-provider-kubectl"

func main() {
	if isWrapper() {
		os.Exit(runWrapper())
	}
	os.Exit(run())
}

type peerFlag []string

func (p *peerFlag) String() string     { return strings.Join(*p, ",") }
func (p *peerFlag) Set(s string) error { *p = append(*p, s); return nil }

func run() int {
	var o options
	var peers peerFlag
	var ns string
	flag.StringVar(&ns, "n", "50,200", "comma-separated numbers of sets (template + warm pool + network policy)")
	flag.StringVar(&o.Scenarios, "scenario", "sets,teams", "scenarios to run: sets, teams")
	flag.StringVar(&o.Providers, "providers", "floor,floor-json,kubectl,agentsandbox", "built-in configurations to run: floor, floor-json, kubectl, agentsandbox")
	flag.Var(&peers, "peer", "another provider binary: NAME=PATH[,kind=agentsandbox|kubectl][,qps=Q][,burst=B][,gogc=G] (repeatable; kind defaults to agentsandbox; gogc sets GOGC for that provider's processes only)")
	flag.IntVar(&o.Parallelism, "parallelism", 10, "terraform -parallelism")
	flag.IntVar(&o.Teams, "teams", 50, "module instances in the teams scenario")
	flag.Float64Var(&o.QPS, "qps", 0, "kubernetes.qps for agentsandbox configurations (0: the provider's default)")
	flag.IntVar(&o.Burst, "burst", 0, "kubernetes.burst for agentsandbox configurations (0: the provider's default)")
	flag.StringVar(&o.Out, "out", "bench/results", "directory for the markdown and JSON results")
	flag.StringVar(&o.Label, "label", "", "name of this run in the result file names (default: a timestamp)")
	flag.BoolVar(&o.Profile, "profile", false, "write CPU and heap profiles of agentsandbox provider processes next to the phase logs")
	flag.Parse()
	for _, s := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: bad -n %q\n", s)
			return 2
		}
		o.N = append(o.N, n)
	}
	o.Peers = peers

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	res, err := runBench(ctx, o)
	if res != nil && len(res.Runs) > 0 {
		if werr := res.write(o.Out); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

type options struct {
	N           []int
	Scenarios   string
	Providers   string
	Peers       []string
	Parallelism int
	Teams       int
	QPS         float64
	Burst       int
	Out         string
	Label       string
	Profile     bool
	// Log receives progress; nil means stderr.
	Log *os.File
}

// subject is one configuration under test.
type subject struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Binary string `json:"binary,omitempty"`
	Source string `json:"source,omitempty"`
	// Opts configures an agentsandbox provider (qps, burst).
	Opts providerOpts `json:"options"`
	// GOGC, when set, is the GOGC of this provider's processes only (not
	// Terraform's): e.g. this provider with Go's default pacing, which
	// turns its own (package gcpolicy) off.
	GOGC string `json:"gogc,omitempty"`
}

type bench struct {
	o      options
	root   string
	cache  string
	work   string
	kubecf string
	cs     kubernetes.Interface
	res    *Results
}

func runBench(ctx context.Context, o options) (*Results, error) {
	root, err := testenv.FindRepoRoot()
	if err != nil {
		return nil, err
	}
	if o.Label == "" {
		o.Label = time.Now().UTC().Format("20060102-150405")
	}
	if !runLabelRE.MatchString(o.Label) {
		return nil, fmt.Errorf("-label %q: lower-case letters, digits and '-' only (it names namespaces)", o.Label)
	}
	if !filepath.IsAbs(o.Out) {
		o.Out = filepath.Join(root, o.Out)
	}
	b := &bench{o: o, root: root, cache: filepath.Join(root, ".cache", "bench")}
	b.work = filepath.Join(b.cache, "work", o.Label)
	if err := os.MkdirAll(b.work, 0o755); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}

	subjects, err := b.subjects(ctx)
	if err != nil {
		return nil, err
	}
	b.res = newResults(o, subjects)

	// The cluster: the one named by AGENTSANDBOX_TEST_KUBECONFIG/KUBECONFIG,
	// else a local control plane with the CRDs and no controller.
	topts, err := testenv.OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	topts.Controller = nil
	if testenv.Managed() {
		// Inside an environment the testenv command started (make test):
		// its CRDs are installed, with a conversion webhook served by that
		// harness. Installing them again would point the webhook at this
		// process, which is gone once the benchmark ends.
		topts.NoCRDs = true
	}
	env, err := testenv.Start(ctx, topts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := env.Stop(context.WithoutCancel(ctx)); err != nil {
			b.logf("stopping the environment: %v", err)
		}
	}()
	b.kubecf = env.Kubeconfig
	cfg, err := testenv.RESTConfig(env.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	if b.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return b.res, err
	}
	b.res.ServerVersion = serverVersion(b.cs)

	scen := map[string]bool{}
	for _, s := range strings.Split(o.Scenarios, ",") {
		scen[strings.TrimSpace(s)] = true
	}
	if scen["sets"] {
		for _, n := range o.N {
			if err := b.runSets(ctx, self, subjects, n); err != nil {
				return b.res, err
			}
			// What is measured so far survives a run cut short.
			if err := b.res.write(o.Out); err != nil {
				return b.res, err
			}
		}
	}
	if scen["teams"] {
		var typed []subject
		for _, s := range subjects {
			if s.Kind == kindAgentsandbox {
				typed = append(typed, s)
			}
		}
		// The release's controller runs for this scenario only.
		sopts := topts
		sopts.Kubeconfig, sopts.NoCRDs, sopts.Controller = env.Kubeconfig, true, testenv.RealController(releases.Default, topts.RepoRoot)
		simEnv, err := testenv.Start(ctx, sopts)
		if err != nil {
			return b.res, err
		}
		err = b.runTeams(ctx, self, typed)
		if serr := simEnv.Stop(context.WithoutCancel(ctx)); serr != nil {
			err = errors.Join(err, serr)
		}
		if err != nil {
			return b.res, err
		}
	}
	return b.res, nil
}

// subjects builds (or finds in the tool cache) every provider binary.
func (b *bench) subjects(ctx context.Context) ([]subject, error) {
	var out []subject
	for _, p := range strings.Split(b.o.Providers, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case kindFloor, kindFloorJSON:
			out = append(out, subject{Name: p, Kind: p})
		case kindAgentsandbox:
			bin := filepath.Join(b.work, "bin", "terraform-provider-agentsandbox")
			b.logf("building this provider (%s)", bin)
			if err := gobuild(ctx, b.root, bin, "."); err != nil {
				return nil, err
			}
			out = append(out, subject{Name: "agentsandbox", Kind: kindAgentsandbox, Binary: bin, Source: provider.RegistryAddress})
		case kindKubectl:
			bin, err := b.kubectlBinary(ctx)
			if err != nil {
				return nil, err
			}
			out = append(out, subject{Name: "kubectl", Kind: kindKubectl, Binary: bin, Source: "registry.terraform.io/gavinbunney/kubectl"})
		default:
			return nil, fmt.Errorf("unknown provider %q (floor, floor-json, kubectl, agentsandbox; others with -peer)", p)
		}
	}
	for _, spec := range b.o.Peers {
		s, err := parsePeer(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	for i := range out {
		if out[i].Kind == kindAgentsandbox && out[i].Opts == (providerOpts{}) {
			out[i].Opts = providerOpts{QPS: b.o.QPS, Burst: b.o.Burst}
		}
	}
	return out, nil
}

// parsePeer reads NAME=PATH[,kind=agentsandbox|kubectl][,qps=Q][,burst=B][,gogc=G].
func parsePeer(spec string) (subject, error) {
	name, rest, ok := strings.Cut(spec, "=")
	if !ok || name == "" {
		return subject{}, fmt.Errorf("-peer %q: want NAME=PATH[,kind=K][,qps=Q][,burst=B][,gogc=G]", spec)
	}
	parts := strings.Split(rest, ",")
	abs, err := filepath.Abs(parts[0])
	if err != nil {
		return subject{}, err
	}
	s := subject{Name: name, Kind: kindAgentsandbox, Binary: abs}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "kind":
			s.Kind = v
		case "qps":
			if s.Opts.QPS, err = strconv.ParseFloat(v, 64); err != nil {
				return subject{}, fmt.Errorf("-peer %q: %w", spec, err)
			}
		case "burst":
			if s.Opts.Burst, err = strconv.Atoi(v); err != nil {
				return subject{}, fmt.Errorf("-peer %q: %w", spec, err)
			}
		case "gogc":
			if _, err := strconv.Atoi(v); err != nil && v != "off" {
				return subject{}, fmt.Errorf("-peer %q: gogc must be a number or off", spec)
			}
			s.GOGC = v
		default:
			return subject{}, fmt.Errorf("-peer %q: unknown option %q", spec, k)
		}
	}
	switch s.Kind {
	case kindAgentsandbox:
		s.Source = provider.RegistryAddress
	case kindKubectl:
		s.Source = "registry.terraform.io/gavinbunney/kubectl"
	default:
		return subject{}, fmt.Errorf("-peer %q: kind must be agentsandbox or kubectl", spec)
	}
	return s, nil
}

// kubectlBinary builds gavinbunney/terraform-provider-kubectl v1.19.0 from
// the Go module proxy into the benchmark's tool cache, once.
func (b *bench) kubectlBinary(ctx context.Context) (string, error) {
	const version = "v1.19.0"
	dir := filepath.Join(b.cache, "tools", "kubectl-"+version)
	bin := filepath.Join(dir, "terraform-provider-kubectl")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	b.logf("building %s@%s into %s (once; a few minutes)", kubectlModule, version, dir)
	cmd := exec.CommandContext(ctx, "go", "install", "-trimpath", kubectlModule+"@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the kubectl peer: %w", err)
	}
	return bin, nil
}

// gobuild builds with the default flags, so that under `go test` (the smoke
// run) the packages the tests already compiled are reused from the cache.
func gobuild(ctx context.Context, dir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// workdir prepares a Terraform working directory for one subject: its
// configuration, a CLI configuration whose dev_overrides point at a plugin
// directory holding a copy of this program named like the provider (see
// wrap.go), and the namespace its objects go to.
func (b *bench) workdir(self string, s subject, name string, files map[string]string) (string, error) {
	dir := filepath.Join(b.work, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	cli := "provider_installation {\n"
	if s.Binary != "" {
		plugins := filepath.Join(dir, ".plugins")
		wrapper := filepath.Join(plugins, filepath.Base(typeBinary(s)))
		if err := os.MkdirAll(plugins, 0o755); err != nil {
			return "", err
		}
		if err := os.Link(self, wrapper); err != nil {
			if err := copyFile(self, wrapper); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(wrapper+".target", []byte(s.Binary), 0o644); err != nil {
			return "", err
		}
		if s.GOGC != "" {
			if err := os.WriteFile(wrapper+".gogc", []byte(s.GOGC), 0o644); err != nil {
				return "", err
			}
		}
		cli += fmt.Sprintf("  dev_overrides {\n    %q = %q\n  }\n", s.Source, plugins)
	}
	cli += "  direct {}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, ".terraformrc"), []byte(cli), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// typeBinary is the file name Terraform looks for in a dev_overrides
// directory: terraform-provider-<type>.
func typeBinary(s subject) string {
	return "terraform-provider-" + s.Source[strings.LastIndexByte(s.Source, '/')+1:]
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func (b *bench) namespace(ctx context.Context, name string) error {
	_, err := b.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (b *bench) deleteNamespace(ctx context.Context, name string) {
	err := b.cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		b.logf("deleting namespace %s: %v", name, err)
	}
}

// phase is one Terraform command of a scenario.
type phase struct {
	Name string
	Args []string
	Vars map[string]string
	// NoChanges: the command must report no changes (plan -detailed-exitcode 0).
	NoChanges bool
}

func (b *bench) runSets(ctx context.Context, self string, subjects []subject, n int) error {
	type wd struct {
		s   subject
		dir string
		ns  string
	}
	var wds []wd
	for _, s := range subjects {
		ns := fmt.Sprintf("bench-%s-%s-%d", b.o.Label, s.Name, n)
		if err := b.namespace(ctx, ns); err != nil {
			return err
		}
		dir, err := b.workdir(self, s, fmt.Sprintf("sets-%d-%s", n, s.Name), map[string]string{
			"main.tf": setsConfig(s.Kind, s.Source, s.Opts),
		})
		if err != nil {
			return err
		}
		wds = append(wds, wd{s, dir, ns})
	}
	vars := func(w wd, gen string) map[string]string {
		return map[string]string{"n": strconv.Itoa(n), "gen": gen, "namespace": w.ns, "kubeconfig": b.kubecf}
	}
	phases := []phase{
		{Name: "apply", Args: []string{"apply", "-auto-approve"}},
		{Name: "plan", Args: []string{"plan", "-detailed-exitcode"}, NoChanges: true},
		{Name: "plan -refresh=false", Args: []string{"plan", "-refresh=false", "-detailed-exitcode"}, NoChanges: true},
		{Name: "apply -refresh-only", Args: []string{"apply", "-refresh-only", "-auto-approve"}},
		// The everyday plan: the state was last written by an apply that
		// refreshed it (the first plan above follows the creating apply).
		{Name: "plan after refresh", Args: []string{"plan", "-detailed-exitcode"}, NoChanges: true},
		{Name: "update", Args: []string{"apply", "-auto-approve"}},
		{Name: "plan after update", Args: []string{"plan", "-detailed-exitcode"}, NoChanges: true},
		{Name: "destroy", Args: []string{"destroy", "-auto-approve"}},
	}
	// Phase by phase, every subject in turn: a change in the machine's load
	// during the run then hits all of them alike.
	var failed error
	for _, ph := range phases {
		gen := "1"
		if ph.Name == "update" || ph.Name == "plan after update" || ph.Name == "destroy" {
			gen = "2"
		}
		for _, w := range wds {
			r := b.terraform(ctx, w.s, w.dir, "sets", n, 3*n, ph, vars(w, gen))
			b.res.add(r)
			if r.Error != "" && failed == nil {
				failed = fmt.Errorf("%s N=%d %s: %s", w.s.Name, n, ph.Name, r.Error)
			}
		}
	}
	for _, w := range wds {
		b.deleteNamespace(ctx, w.ns)
	}
	return failed
}

func (b *bench) runTeams(ctx context.Context, self string, subjects []subject) error {
	var failed error
	for _, s := range subjects {
		ns := fmt.Sprintf("bench-%s-teams-%s", b.o.Label, s.Name)
		if err := b.namespace(ctx, ns); err != nil {
			return err
		}
		root, module := teamsConfig(s.Source, s.Opts)
		dir, err := b.workdir(self, s, "teams-"+s.Name, map[string]string{"main.tf": root, "team/main.tf": module})
		if err != nil {
			return err
		}
		if out, err := b.tfCommand(ctx, dir, nil, "get").CombinedOutput(); err != nil {
			return fmt.Errorf("terraform get: %w\n%s", err, out)
		}
		vars := func(changed int) map[string]string {
			return map[string]string{"teams": strconv.Itoa(b.o.Teams), "namespace": ns, "kubeconfig": b.kubecf, "changed": strconv.Itoa(changed)}
		}
		for _, ph := range []phase{
			{Name: "apply", Args: []string{"apply", "-auto-approve"}, Vars: vars(-1)},
			{Name: "plan", Args: []string{"plan", "-detailed-exitcode"}, Vars: vars(-1), NoChanges: true},
			{Name: "one team changed", Args: []string{"apply", "-auto-approve"}, Vars: vars(b.o.Teams / 2)},
			{Name: "plan after change", Args: []string{"plan", "-detailed-exitcode"}, Vars: vars(b.o.Teams / 2), NoChanges: true},
			{Name: "destroy", Args: []string{"destroy", "-auto-approve"}, Vars: vars(b.o.Teams / 2)},
		} {
			r := b.terraform(ctx, s, dir, "teams", b.o.Teams, 4*b.o.Teams, ph, ph.Vars)
			b.res.add(r)
			if r.Error != "" && failed == nil {
				failed = fmt.Errorf("teams %s %s: %s", s.Name, ph.Name, r.Error)
			}
		}
		b.deleteNamespace(ctx, ns)
	}
	return failed
}

func (b *bench) tfCommand(ctx context.Context, dir string, extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "terraform", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+filepath.Join(dir, ".terraformrc"),
		"TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1",
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	// Terraform's plugin client stops providers on exit; a killed run must
	// not leave them behind either.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// terraform runs one phase for one subject and measures it.
func (b *bench) terraform(ctx context.Context, s subject, dir, scenario string, n, objects int, ph phase, vars map[string]string) Run {
	r := Run{Scenario: scenario, N: n, Objects: objects, Provider: s.Name, Phase: ph.Name, Load: loadavg()}
	pdir := filepath.Join(dir, ".phases", strings.ReplaceAll(ph.Name, " ", "_"))
	_ = os.RemoveAll(pdir)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	args := append([]string{}, ph.Args...)
	args = append(args, "-input=false", "-no-color", "-lock=false", fmt.Sprintf("-parallelism=%d", b.o.Parallelism))
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-var", k+"="+vars[k])
	}
	env := []string{procDirVar + "=" + pdir, selfstats.StatsDirVar + "=" + pdir}
	if b.o.Profile && s.Kind == kindAgentsandbox {
		env = append(env, selfstats.CPUProfileDirVar+"="+pdir, selfstats.MemProfileDirVar+"="+pdir)
	}
	cmd := b.tfCommand(ctx, dir, env, args...)
	logf, err := os.Create(filepath.Join(pdir, "terraform.log"))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf

	before, err := apiserverCounts(ctx, b.cs)
	if err != nil {
		r.Error = "reading apiserver metrics: " + err.Error()
		return r
	}
	t0 := time.Now()
	err = cmd.Run()
	r.Seconds = time.Since(t0).Seconds()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && cmd.ProcessState != nil {
		// wait4 reports the process and the children it waited for: the
		// provider processes are included.
		r.TerraformCPU = tv(ru.Utime) + tv(ru.Stime)
	}
	r.Exit = cmd.ProcessState.ExitCode()
	switch {
	case err == nil:
	case ph.NoChanges && r.Exit == 2:
		r.Error = "the plan has changes (should be empty); see " + logf.Name()
	default:
		r.Error = fmt.Sprintf("terraform %s: %v; see %s", ph.Args[0], err, logf.Name())
	}
	// The apiserver's counter is updated when a request completes; a last
	// response can reach the client a moment before that.
	time.Sleep(200 * time.Millisecond)
	after, err := apiserverCounts(ctx, b.cs)
	if err != nil {
		r.Error = errors.Join(errors.New(r.Error), err).Error()
	}
	r.APIRequests = diffCounts(before, after)
	r.APITotal = sum(r.APIRequests)
	b.collect(&r, pdir)
	b.logf("%-6s N=%-4d %-14s %-20s %7.2fs  api %5d  provider cpu %6.2fs rss %5.0f MiB  load %.2f %s",
		scenario, n, s.Name, ph.Name, r.Seconds, r.APITotal, r.ProviderCPU, float64(r.ProviderRSS)/(1<<20), r.Load[0], r.Error)
	return r
}

// collect reads what the wrapper and the provider wrote about themselves.
func (b *bench) collect(r *Run, pdir string) {
	procs, _ := filepath.Glob(filepath.Join(pdir, "proc-*.json"))
	for _, p := range procs {
		var pr procRecord
		if raw, err := os.ReadFile(p); err == nil && json.Unmarshal(raw, &pr) == nil {
			r.ProviderProcesses++
			r.ProviderCPU += pr.User + pr.Sys
			r.ProviderRSS = max(r.ProviderRSS, pr.MaxRSS)
		}
	}
	stats, _ := filepath.Glob(filepath.Join(pdir, "stats-*.json"))
	if len(stats) > 0 {
		r.ProviderRequests = map[string]int64{}
	}
	for _, p := range stats {
		var st selfstats.Stats
		if raw, err := os.ReadFile(p); err == nil && json.Unmarshal(raw, &st) == nil {
			for k, v := range providerCountsByResource(st.Requests) {
				r.ProviderRequests[k] += v
			}
			r.ProviderRequestsAll += st.Total
			r.ProviderRetries += st.Retries
			if r.FastPath == nil {
				r.FastPath = &selfstats.FastPathCounts{}
			}
			r.ProviderHeapSys = max(r.ProviderHeapSys, st.Memory.HeapSys)
			r.ProviderHeapPeakLive = max(r.ProviderHeapPeakLive, st.Memory.HeapPeakLive)
			r.FastPath.Add(st.FastPath)
		}
	}
	if r.ProviderRequests != nil {
		r.ProviderTotal = sum(r.ProviderRequests)
	}
}

func loadavg() [3]float64 {
	var l [3]float64
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(raw))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

func serverVersion(cs kubernetes.Interface) string {
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return ""
	}
	return v.GitVersion
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func terraformVersion() string {
	out, err := exec.Command("terraform", "version", "-json").Output()
	if err != nil {
		return ""
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	_ = json.Unmarshal(out, &v)
	return v.Version
}

func cpuModel() string {
	raw, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
