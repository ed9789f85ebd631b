package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestPidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.pid")
	if err := writePid(path, 4242); err != nil {
		t.Fatal(err)
	}
	if pid, err := readPid(path); err != nil || pid != 4242 {
		t.Errorf("readPid = %d, %v", pid, err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPid(path); err == nil {
		t.Error("expected an error for a garbage pid file")
	}
}

func TestProcessAliveAndTerminate(t *testing.T) {
	marker := t.TempDir() // stands in for the cluster directory
	// cat blocks reading its stdin (a pipe nobody writes to) before it ever
	// looks at the marker argument, which only has to appear in argv.
	cmd := exec.Command("cat", "-", marker)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	pid := cmd.Process.Pid

	// Start returns once the exec succeeded, which the kernel signals
	// (close-on-exec) before it has set up the new program's argv: for a
	// moment /proc/<pid>/cmdline is still empty. Wait for it.
	for deadline := time.Now().Add(5 * time.Second); !processAlive(pid, marker); {
		if time.Now().After(deadline) {
			t.Fatal("live process with marker reported dead")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if processAlive(pid, "/some/other/cluster") {
		t.Error("a process without the marker must not count as ours (pid reuse)")
	}
	if err := terminate([]int{pid}, marker, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("process not reaped after terminate")
	}
	if processAlive(pid, marker) {
		t.Error("terminated process still reported alive")
	}
}
