package acctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests that terraform-plugin-testing cannot express (signals, -parallelism)
// drive the terraform binary themselves, with a development build of the
// provider named in a dev_overrides CLI configuration, as exampletest does
// for the examples.

// TFWork is one working directory run with the terraform CLI.
type TFWork struct {
	t       *testing.T
	bin     string
	dir     string
	plugins string
	// Env is the environment of every command; tests may append to it
	// (TF_LOG_PROVIDER, TF_LOG_PATH).
	Env []string
}

// NewTFWork builds the provider into a directory of t and returns a working
// directory whose terraform runs use it through dev_overrides, with a clean
// environment (nothing of the machine's KUBECONFIG or KUBE_*; the fast
// path's switch, FastPathEnv, is kept).
func NewTFWork(t *testing.T) *TFWork {
	t.Helper()
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		p, err := exec.LookPath("terraform")
		if err != nil {
			t.Skip("terraform CLI not on PATH (or set TF_ACC_TERRAFORM_PATH)")
		}
		bin = p
	}
	plugins := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "terraform-provider-agentsandbox"), ".")
	build.Dir = RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rc := filepath.Join(plugins, "dev.tfrc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, `provider_installation {
  dev_overrides {
    "registry.terraform.io/agentsandbox/agentsandbox" = %[1]q
    "registry.opentofu.org/agentsandbox/agentsandbox" = %[1]q
  }
  direct {}
}
`, plugins), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	return &TFWork{t: t, bin: bin, dir: t.TempDir(), plugins: plugins, Env: append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TF_CLI_CONFIG_FILE=" + rc,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
	}, FastPathEnv()...)}
}

// Provider is the path of the provider binary the runs use (to look for
// provider processes left behind).
func (w *TFWork) Provider() string {
	return filepath.Join(w.plugins, "terraform-provider-agentsandbox")
}

// Write replaces the configuration.
func (w *TFWork) Write(config string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(config), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// Run runs terraform to the end and returns its output and exit status.
func (w *TFWork) Run(args ...string) (string, int) {
	w.t.Helper()
	p := w.Start(args...)
	return p.Wait()
}

// TFProc is a terraform command running in the background.
type TFProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// Start starts terraform in the background; the test's cleanup kills it if
// it is still running.
func (w *TFWork) Start(args ...string) *TFProc {
	w.t.Helper()
	cmd := exec.Command(w.bin, append(args, "-no-color")...)
	cmd.Dir = w.dir
	cmd.Env = w.Env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	p := &TFProc{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	w.t.Cleanup(func() {
		// Never leave a terraform (or its provider) running.
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Wait waits for the command and returns its output and exit status
// (-1 when a signal ended it).
func (p *TFProc) Wait() (string, int) {
	<-p.done
	return p.out.String(), p.cmd.ProcessState.ExitCode()
}

// Interrupt sends SIGINT, as Ctrl-C does, then SIGKILL if terraform has
// not exited after grace. It reports whether SIGKILL was needed.
func (p *TFProc) Interrupt(grace time.Duration) bool {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		return false
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return true
}

// Kill sends SIGKILL (a lost CI runner) and waits for the exit.
func (p *TFProc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// CheckFastPathLog fails t unless the provider's log at path (written with
// TF_LOG_PROVIDER=INFO and TF_LOG_PATH) shows the fast path on, or off, in
// the processes that logged it (each logs it once, provider.FastPathVar)
// and no process taking the other path.
func CheckFastPathLog(t testing.TB, path string, on bool) {
	t.Helper()
	logged, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, other := "fast path in use", "fast path off"
	if !on {
		want, other = other, want
	}
	if !bytes.Contains(logged, []byte(want)) || bytes.Contains(logged, []byte(other)) {
		t.Errorf("the provider's log (%s) does not say %q, or says %q too", path, want, other)
	}
}
