package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The watchdog covers the one case the harness cannot handle itself: its own
// sudden death. `go test -timeout` panics the test binary without running
// deferred teardown, and SIGKILL runs nothing at all; either would leave a
// detached cluster (~0.7 GB) running on a small shared machine.
//
// It is the harness's own executable started again with watchdogVar set, in
// a session of its own (so a terminal's Ctrl-C does not reach it), holding
// the read end of a pipe whose write end only the harness has. A clean
// teardown writes watchdogDone and closes the pipe; the pipe closing without
// it means the harness died, and the watchdog runs `localcluster down` and
// kills whatever still carries the run's marker.
const (
	watchdogVar  = "AGENTSANDBOX_TESTENV_WATCHDOG"
	watchdogDone = "done\n"
)

// hookInstalled records that this program calls RunWatchdogIfRequested first
// thing. Only then is re-executing it as a watchdog safe: a test binary
// without the hook would run its tests again instead, recursively starting
// environments.
var hookInstalled atomic.Bool

// RunWatchdogIfRequested must be called at the very start of every program
// that starts environments (the testenv command's main, acctest.Main). In a
// watchdog process it does the watchdog's job and exits; otherwise it
// returns at once.
func RunWatchdogIfRequested() {
	hookInstalled.Store(true)
	if v := os.Getenv(watchdogVar); v != "" {
		os.Exit(runWatchdog(v, os.Stdin, os.Stderr))
	}
}

type watchdogConfig struct {
	Dir    string `json:"dir"`
	Bin    string `json:"bin"`
	Marker string `json:"marker"`
}

type watchdog struct {
	cmd  *exec.Cmd
	pipe *os.File
	done chan error
}

// startWatchdog starts the watchdog for a run, or returns nil if this
// program has no watchdog hook (then a sudden death of the harness leaks the
// cluster until `localcluster down --dir` is run by hand).
func startWatchdog(cfg watchdogConfig) (*watchdog, error) {
	if !hookInstalled.Load() {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, err
	}
	defer r.Close()
	logFile, err := os.Create(filepath.Join(cfg.Dir, "watchdog.log"))
	if err != nil {
		w.Close()
		return nil, err
	}
	defer logFile.Close()

	cmd := exec.Command(exe)
	// Without the marker: the watchdog is not one of the processes it hunts.
	cmd.Env = append(environWithout(os.Environ(), MarkerVar, watchdogVar), watchdogVar+"="+string(spec))
	cmd.Stdin = r
	// A file, never the harness's stdout: `go test` waits for EOF on the
	// pipes it gives a test binary, and the watchdog must not hold them.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = cfg.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	wd := &watchdog{cmd: cmd, pipe: w, done: make(chan error, 1)}
	go func() { wd.done <- cmd.Wait() }()
	return wd, nil
}

func (w *watchdog) pid() int { return w.cmd.Process.Pid }

// release tells the watchdog that teardown is complete and waits for it.
func (w *watchdog) release() error {
	_, werr := io.WriteString(w.pipe, watchdogDone)
	cerr := w.pipe.Close()
	select {
	case err := <-w.done:
		if err != nil {
			return fmt.Errorf("watchdog: %w", err)
		}
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		return errors.New("watchdog did not exit after release; killed it")
	}
	return errors.Join(werr, cerr)
}

// runWatchdog is the watchdog process's main. It logs to the run directory's
// watchdog.log, which its parent set as stdout and stderr.
func runWatchdog(spec string, parent io.Reader, log io.Writer) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	var cfg watchdogConfig
	if err := json.Unmarshal([]byte(spec), &cfg); err != nil {
		fmt.Fprintf(log, "watchdog: bad %s: %v\n", watchdogVar, err)
		return 2
	}
	msg, _ := io.ReadAll(parent) // returns when the harness closes the pipe or dies
	if string(msg) == watchdogDone {
		return 0
	}
	fmt.Fprintf(log, "%s watchdog: the harness exited without tearing down %s; cleaning up\n",
		time.Now().Format(time.RFC3339), cfg.Dir)
	code := 0
	if cfg.Bin != "" {
		ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, cfg.Bin, "down", "--dir", cfg.Dir)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(log, "watchdog: localcluster down: %v\n", err)
			code = 1
		}
	}
	left, err := scanProcesses("/proc", procMatcher{marker: cfg.Marker, dir: cfg.Dir, exclude: map[int]bool{os.Getpid(): true}})
	if err != nil {
		fmt.Fprintf(log, "watchdog: scanning /proc: %v\n", err)
		return 1
	}
	for _, p := range left {
		fmt.Fprintf(log, "watchdog: killing leftover %s\n", p)
	}
	if survivors := killProcesses(left, leakGrace); len(survivors) > 0 {
		fmt.Fprintf(log, "watchdog: %d processes survived SIGKILL\n", len(survivors))
		code = 1
	}
	fmt.Fprintln(log, "watchdog: done")
	return code
}

// environWithout returns env minus the named variables.
func environWithout(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			if name == n {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
