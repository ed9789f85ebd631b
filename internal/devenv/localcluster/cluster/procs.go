package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Pid files are the only link between `down`/`status` and the processes of
// a cluster. A pid can be reused by an unrelated process after ours exited,
// so a pid only counts as ours while its command line mentions the cluster
// directory: every process of a cluster has the absolute directory in its
// arguments (`supervise --dir D`, `--data-dir=D/etcd`, `--kubeconfig=D/...`).

func writePid(path string, pid int) error {
	return os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

func readPid(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: bad pid %q", path, strings.TrimSpace(string(data)))
	}
	return pid, nil
}

// processAlive reports whether pid is a live process (not a zombie) whose
// command line contains marker.
func processAlive(pid int, marker string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state field follows the parenthesised command name, which may
	// itself contain spaces or parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		if state := stat[i+2]; state == 'Z' || state == 'X' {
			return false
		}
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return bytes.Contains(cmdline, []byte(marker))
}

// waitGone polls until none of pids is alive or the timeout passes; it
// returns the pids still alive.
func waitGone(pids []int, marker string, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var alive []int
		for _, pid := range pids {
			if processAlive(pid, marker) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// terminate sends SIGTERM to every live pid, waits up to grace, then sends
// SIGKILL to the survivors and waits for them to disappear. It returns an
// error only if a process outlives SIGKILL (e.g. stuck in the kernel).
func terminate(pids []int, marker string, grace time.Duration) error {
	var live []int
	for _, pid := range pids {
		if processAlive(pid, marker) {
			live = append(live, pid)
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	if len(live) == 0 {
		return nil
	}
	live = waitGone(live, marker, grace)
	for _, pid := range live {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if live = waitGone(live, marker, 10*time.Second); len(live) > 0 {
		return fmt.Errorf("processes %v survived SIGKILL", live)
	}
	return nil
}

// errNotRunning is returned when a cluster directory has no live supervisor.
var errNotRunning = errors.New("not running")
