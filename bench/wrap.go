package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The benchmark measures every provider process the same way, whatever
// language or library it is written in: Terraform starts a copy of this
// binary, named like the provider, which runs the real provider as its
// child with the same standard streams and environment (the plugin
// handshake and the gRPC socket pass straight through) and, when the child
// exits, records what wait4 reports for it: CPU seconds and peak RSS.
//
// The real binary's path is in a file next to the copy, <copy>.target (and
// the GOGC of the real provider, if the subject sets one, in <copy>.gogc);
// the record goes to $BENCH_PROC_DIR/proc-<pid>.json.

const procDirVar = "BENCH_PROC_DIR"

type procRecord struct {
	Provider string  `json:"provider"`
	PID      int     `json:"pid"`
	Wall     float64 `json:"wall_seconds"`
	User     float64 `json:"user_cpu_seconds"`
	Sys      float64 `json:"sys_cpu_seconds"`
	MaxRSS   int64   `json:"max_rss_bytes"`
	Exit     int     `json:"exit_code"`
}

func isWrapper() bool {
	return strings.HasPrefix(filepath.Base(os.Args[0]), "terraform-provider-")
}

func runWrapper() int {
	self := os.Args[0]
	target, err := os.ReadFile(self + ".target")
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench wrapper: %v\n", err)
		return 1
	}
	cmd := exec.Command(strings.TrimSpace(string(target)), os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if gogc, err := os.ReadFile(self + ".gogc"); err == nil {
		cmd.Env = append(os.Environ(), "GOGC="+strings.TrimSpace(string(gogc)))
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "bench wrapper: %v\n", err)
		return 1
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	rec := procRecord{Provider: filepath.Base(self), PID: cmd.Process.Pid, Wall: time.Since(t0).Seconds(), Exit: cmd.ProcessState.ExitCode()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rec.User = tv(ru.Utime)
		rec.Sys = tv(ru.Stime)
		rec.MaxRSS = ru.Maxrss * 1024
	}
	if dir := os.Getenv(procDirVar); dir != "" {
		b, _ := json.Marshal(rec)
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("proc-%d.json", rec.PID)), b, 0o644)
	}
	if rec.Exit < 0 {
		return 1
	}
	return rec.Exit
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
