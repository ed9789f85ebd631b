package faultacc_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The interruption and concurrency tests drive the terraform binary
// themselves (terraform-plugin-testing can neither send signals nor pass
// -parallelism), with a development build of the provider named in a
// dev_overrides CLI configuration, as exampletest does for the examples.

// tfWork is one working directory run with the terraform CLI.
type tfWork struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

// newTFWork builds the provider into a directory of t and returns a working
// directory whose terraform runs use it through dev_overrides, with a clean
// environment (nothing of the machine's KUBECONFIG or KUBE_*).
func newTFWork(t *testing.T) *tfWork {
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
	build.Dir = repoRoot(t)
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
	return &tfWork{t: t, bin: bin, dir: t.TempDir(), env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TF_CLI_CONFIG_FILE=" + rc,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
	}}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository")
	}
	// internal/testing/faultproxy/faultacc/cli_test.go
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

// write replaces the configuration.
func (w *tfWork) write(config string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(config), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// run runs terraform to the end and returns its output and exit status.
func (w *tfWork) run(args ...string) (string, int) {
	w.t.Helper()
	p := w.start(args...)
	return p.wait()
}

// tfProc is a terraform command running in the background.
type tfProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

func (w *tfWork) start(args ...string) *tfProc {
	w.t.Helper()
	cmd := exec.Command(w.bin, append(args, "-no-color")...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	p := &tfProc{cmd: cmd, out: out, done: make(chan struct{})}
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

// wait waits for the command and returns its output and exit status
// (-1 when a signal ended it).
func (p *tfProc) wait() (string, int) {
	<-p.done
	return p.out.String(), p.cmd.ProcessState.ExitCode()
}

// interrupt sends SIGINT, as Ctrl-C does, then SIGKILL if terraform has
// not exited after grace. It reports whether SIGKILL was needed.
func (p *tfProc) interrupt(grace time.Duration) bool {
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
