package main

// These tests run the real command against a cluster "given" through a
// kubeconfig that is never contacted (no CRDs, no controller), which
// isolates what the command itself promises: the environment reaches the
// command, the exit status comes back, leftovers fail the run, and signals
// reach the command before teardown.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var testenvBin string

func TestMain(m *testing.M) {
	// The command is built once: `go run` would turn every non-zero exit
	// status into 1, hiding what is being tested.
	dir, err := os.MkdirTemp("", "testenv-cmd-test")
	if err != nil {
		panic(err)
	}
	testenvBin = filepath.Join(dir, "testenv")
	if out, err := exec.Command("go", "build", "-o", testenvBin, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("building testenv: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func command(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n" +
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenvBin, append([]string{"--"}, args...)...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kc, "AGENTSANDBOX_TEST_KUBECONFIG=",
		"AGENTSANDBOX_TEST_NO_CONTROLLER=1", "AGENTSANDBOX_TEST_NO_CRDS=1", "AGENTSANDBOX_TESTENV_RUN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return ee.ExitCode()
}

func TestCommand_EnvironmentAndExitStatus(t *testing.T) {
	cmd, stdout, stderr := command(t, "sh", "-c", `echo "$KUBECONFIG|$AGENTSANDBOX_TEST_KUBECONFIG|$AGENTSANDBOX_TESTENV_RUN"; exit 7`)
	if got := exitStatus(t, cmd.Run()); got != 7 {
		t.Fatalf("exit status %d, want the command's 7\n%s", got, stderr)
	}
	fields := strings.Split(strings.TrimSpace(stdout.String()), "|")
	if len(fields) != 3 || fields[0] == "" || fields[0] != fields[1] || len(fields[2]) != 8 {
		t.Errorf("command saw %q", stdout.String())
	}
	for _, want := range []string{"testenv: environment ready in", "testenv: command finished in", "with exit status 7", "testenv: teardown in"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestCommand_LeftoverProcessFailsTheRun(t *testing.T) {
	// The command succeeds but leaves a detached process behind, which
	// inherits the run's marker.
	cmd, _, stderr := command(t, "sh", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & exit 0`)
	if got := exitStatus(t, cmd.Run()); got != 1 {
		t.Fatalf("exit status %d, want 1 for a leaked process\n%s", got, stderr)
	}
	if !strings.Contains(stderr.String(), "still running after teardown and have been killed") || !strings.Contains(stderr.String(), "sleep 300") {
		t.Errorf("stderr does not name the leftover:\n%s", stderr)
	}
}

func TestCommand_SignalReachesCommandThenTeardown(t *testing.T) {
	// The command's child (a grandchild of testenv) reports the signal, so
	// this also checks that the whole process group gets it.
	cmd, stdout, stderr := command(t, "sh", "-c", `sh -c 'trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.05; done' & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), "ready") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("command never started\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if !strings.Contains(stdout.String(), "got-term") {
		t.Errorf("the command's process group did not get SIGTERM; stdout %q\n%s", stdout, stderr)
	}
	// The outer shell has no trap, so it dies of the signal: 128+15.
	if got := exitStatus(t, err); got != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d\n%s", got, stderr)
	}
	if !strings.Contains(stderr.String(), "passing it to the command") || !strings.Contains(stderr.String(), "teardown in") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestCommand_KilledBySignalMapsTo128PlusN(t *testing.T) {
	cmd, _, stderr := command(t, "sh", "-c", `kill -KILL $$`)
	if got := exitStatus(t, cmd.Run()); got != 128+int(syscall.SIGKILL) {
		t.Errorf("exit status %d, want %d\n%s", got, 128+int(syscall.SIGKILL), stderr)
	}
}

func TestCommand_Usage(t *testing.T) {
	cmd := exec.Command(testenvBin)
	if got := exitStatus(t, cmd.Run()); got != 2 {
		t.Errorf("exit status without a command = %d, want 2", got)
	}
}
