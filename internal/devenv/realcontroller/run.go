package realcontroller

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// Webhook says whether and where a release's controller serves its
// conversion webhook. Every v0.5.x release serves v1beta1 and v1alpha1 and
// converts between them in the controller's own webhook server, whose
// certificate it makes and whose CA it patches into the CRDs at start-up
// (cmd/agent-sandbox-controller/main.go:248-257 at v0.5.0); v1.0.x has no
// webhook.
type Webhook struct {
	// Port is the port the webhook server binds to (--webhook-port). The
	// server listens on every interface: upstream has no flag for its host
	// (controller-runtime's webhook.Options.Host is left empty). A free
	// port is picked when 0.
	Port int
}

// ServesConversionWebhook reports whether release version runs a conversion
// webhook: every release that serves v1alpha1 (releases.Profile).
func ServesConversionWebhook(version string) bool {
	p, err := releases.Lookup(version)
	return err == nil && p.ServesV1alpha1
}

// Options say how to run a controller.
type Options struct {
	Binary Binary
	// Kubeconfig is the cluster to reconcile.
	Kubeconfig string
	// Dir receives the controller's log (controller.log) and, for a release
	// with a webhook, its serving certificate (webhook-certs/).
	Dir string
	// Webhook is the conversion webhook's port, for a release that has one
	// (ServesConversionWebhook); ignored otherwise.
	Webhook Webhook
	// Args are added after the flags Start sets (a later flag wins).
	Args []string
	// Env is added to this process's environment (e.g. a marker that lets
	// a harness find every process it started).
	Env []string
	// SandboxConfig, when set, is the content of the ConfigMap
	// agent-sandbox-config (key -> value) as the release's Deployment mounts
	// it at /etc/sandbox-config (k8s/extensions.controller.yaml), which the
	// controller reads once at start (allowed-label-domains:
	// cmd/agent-sandbox-controller/main.go:462 at v1.0.3). Out of cluster
	// the controller then runs in a mount namespace of its own (unshare,
	// root only) where a tmpfs over /etc holds just those files, so the
	// host's /etc is neither read nor changed.
	SandboxConfig map[string]string
	// Log receives the controller's log lines too, when set.
	Log io.Writer
}

// Process is a running controller.
type Process struct {
	Binary Binary
	// Args is the command line it runs with (without the binary).
	Args []string
	// WebhookPort is its conversion webhook's port (0: none).
	WebhookPort int
	// LogPath is its log file.
	LogPath string

	cmd    *exec.Cmd
	health string
	done   chan struct{}
	err    error // set before done is closed

	mu      sync.Mutex
	workers map[string]bool // controller kinds whose workers started
	changed chan struct{}   // closed and replaced when workers changes
}

// Args returns the command line (without the binary) that runs release
// version out of cluster against kubeconfig: the extensions controllers on,
// no leader election (one instance per cluster), no metrics server, the
// health probes on loopback at healthAddr, and for a v0.5.x release its
// webhook on webhookPort with the certificate written to certDir.
// v0.5.2-v0.5.6 could turn the webhook off (--enable-webhook=false), v0.5.0
// cannot; it stays on for all of them, so v1alpha1 objects are converted by
// the release's own code.
func Args(version, kubeconfig, healthAddr string, webhookPort int, certDir string) []string {
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--extensions",
		"--leader-elect=false",
		"--metrics-bind-address=0",
		"--health-probe-bind-address=" + healthAddr,
	}
	if ServesConversionWebhook(version) {
		args = append(args, "--webhook-port="+strconv.Itoa(webhookPort), "--webhook-cert-dir="+certDir)
	}
	return args
}

// Start runs the controller and returns once its health endpoint answers;
// WaitReconciling tells when its controllers have started their workers.
// The process runs until Stop or until ctx is cancelled.
func Start(ctx context.Context, o Options) (*Process, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	healthPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	webhookPort := 0
	if ServesConversionWebhook(o.Binary.Version) {
		if webhookPort = o.Webhook.Port; webhookPort == 0 {
			if webhookPort, err = FreePort(); err != nil {
				return nil, err
			}
		}
	}
	healthAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(healthPort))
	args := append(Args(o.Binary.Version, o.Kubeconfig, healthAddr, webhookPort, filepath.Join(o.Dir, "webhook-certs")), o.Args...)
	logPath := filepath.Join(o.Dir, "controller.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	p := &Process{
		Binary: o.Binary, Args: args, WebhookPort: webhookPort, LogPath: logPath,
		health:  "http://" + healthAddr,
		done:    make(chan struct{}),
		workers: map[string]bool{},
		changed: make(chan struct{}),
	}
	fmt.Fprintf(logFile, "# %s\n# %s %s\n", o.Binary, o.Binary.Path, strings.Join(args, " "))
	cmd := exec.Command(o.Binary.Path, args...)
	cmd.Env = append(os.Environ(), o.Env...)
	if o.SandboxConfig != nil {
		if cmd, err = withSandboxConfig(o.Dir, o.SandboxConfig, o.Binary.Path, args); err != nil {
			logFile.Close()
			return nil, err
		}
		cmd.Env = append(os.Environ(), o.Env...)
		fmt.Fprintf(logFile, "# in a mount namespace of its own, /etc/sandbox-config holding %d files: %s\n", len(o.SandboxConfig), strings.Join(cmd.Args, " "))
	}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	// A process group of its own: a terminal's ^C reaches the harness,
	// which stops the controller in order, not the controller directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", o.Binary.Path, err)
	}
	p.cmd = cmd
	var copied sync.WaitGroup
	copied.Add(1)
	go func() {
		defer copied.Done()
		p.scan(pr, logFile, o.Log)
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		copied.Wait()
		logFile.Close()
		p.err = err
		close(p.done)
	}()
	if err := p.waitHealthy(ctx, time.Minute); err != nil {
		_ = p.Stop(10 * time.Second)
		return nil, err
	}
	return p, nil
}

// startingWorkers matches controller-runtime's log line when a controller's
// caches have synced and its workers start, in the console and the JSON
// encoding: `Starting workers {"controller": "sandbox", ...,
// "controllerKind": "Sandbox", "worker count": 100}`.
var startingWorkers = regexp.MustCompile(`Starting workers.*"controllerKind":\s*"([A-Za-z]+)"`)

func (p *Process) scan(r io.Reader, file io.Writer, also io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(file, line)
		if also != nil {
			fmt.Fprintln(also, line)
		}
		if m := startingWorkers.FindStringSubmatch(line); m != nil {
			p.mu.Lock()
			p.workers[m[1]] = true
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

func (p *Process) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.health+"/healthz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up: %w; its log (%s) ends:\n%s", p.Binary, p.err, p.LogPath, LogTail(p.LogPath, 30))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s/healthz did not answer within %s; its log (%s) ends:\n%s", p.Binary, p.health, timeout, p.LogPath, LogTail(p.LogPath, 30))
		}
	}
}

// ExtensionsKinds are the kinds whose controllers the real controller runs
// with --extensions, in every release the project supports
// (cmd/agent-sandbox-controller/main.go: SandboxReconciler, and with
// extensions the SandboxClaim, SandboxWarmPool and SandboxTemplate
// reconcilers).
var ExtensionsKinds = []string{"Sandbox", "SandboxClaim", "SandboxWarmPool", "SandboxTemplate"}

// WaitReconciling waits until the workers of every controller of kinds have
// started (their informers' caches synced), the process exits, or timeout.
func (p *Process) WaitReconciling(ctx context.Context, kinds []string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		var missing []string
		for _, k := range kinds {
			if !p.workers[k] {
				missing = append(missing, k)
			}
		}
		changed := p.changed
		p.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-p.done:
			return fmt.Errorf("%s exited before its controllers started (%w); its log (%s) ends:\n%s", p.Binary, p.err, p.LogPath, LogTail(p.LogPath, 30))
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("%s: the workers of %s did not start within %s; its log (%s) ends:\n%s",
				p.Binary, strings.Join(missing, ", "), timeout, p.LogPath, LogTail(p.LogPath, 30))
		}
	}
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited (after Done).
func (p *Process) Err() error { return p.err }

// Stop asks the controller to stop (SIGTERM, which controller-runtime
// handles by stopping its controllers) and kills it if it has not exited
// within grace. Stopping an exited process returns how it exited, unless it
// was stopped by this call.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return fmt.Errorf("%s had exited: %w", p.Binary, p.err)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", p.Binary, grace)
}

// sandboxConfigDir is where the release's Deployment mounts the ConfigMap
// agent-sandbox-config (k8s/extensions.controller.yaml at v1.0.3).
const sandboxConfigDir = "/etc/sandbox-config"

// withSandboxConfig is the command that runs bin with args in a private
// mount namespace where /etc is a fresh tmpfs holding only
// /etc/sandbox-config/<key> for each entry of files (copied there from dir,
// where they are written first). The controller reads nothing else below
// /etc when it runs out of cluster with a kubeconfig.
func withSandboxConfig(dir string, files map[string]string, bin string, args []string) (*exec.Cmd, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("running the controller with its agent-sandbox-config mounted at %s needs a mount namespace, which needs root", sandboxConfigDir)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, fmt.Errorf("running the controller with its agent-sandbox-config mounted at %s: %w (util-linux)", sandboxConfigDir, err)
	}
	src := filepath.Join(dir, "sandbox-config")
	if err := os.RemoveAll(src); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	for k, v := range files {
		if strings.ContainsAny(k, "/\x00") || k == "" || k == "." || k == ".." {
			return nil, fmt.Errorf("agent-sandbox-config key %q is not a file name", k)
		}
		if err := os.WriteFile(filepath.Join(src, k), []byte(v), 0o644); err != nil {
			return nil, err
		}
	}
	script := `set -e; mount -t tmpfs -o mode=0755 tmpfs /etc; mkdir ` + sandboxConfigDir + `; cp -a "$0"/. ` + sandboxConfigDir + `/; exec "$@"`
	return exec.Command(unshare, append([]string{"--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, src, bin}, args...)...), nil
}

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("listening on 127.0.0.1:0 gave %v, not a TCP address", ln.Addr())
	}
	return addr.Port, nil
}

// LogTail returns the last n lines of a log file ("" if unreadable).
func LogTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return tail(string(b), n)
}
