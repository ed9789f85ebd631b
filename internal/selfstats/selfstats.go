// Package selfstats lets a benchmark or a profiling session see inside the
// provider process without a debugger: Terraform starts the provider itself,
// several times per command, so the only handle a caller has is the
// environment it passes down.
//
//	AGENTSANDBOX_CPUPROFILE_DIR  write a pprof CPU profile of the whole process to DIR/cpu-<pid>.pprof
//	AGENTSANDBOX_STATS_DIR       write DIR/stats-<pid>.json on exit: API requests by method and
//	                             resource path (the counters of internal/clients/kube), retries,
//	                             CPU seconds and peak RSS of the process, and what
//	                             package fastpath answered itself
//
// Both are off unless set; unset, Start costs one environment lookup each.
// The files are written when Serve returns, i.e. when Terraform shuts the
// provider down over the plugin protocol (it does so after every command).
package selfstats

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
)

// Environment variables read by Start.
const (
	CPUProfileDirVar = "AGENTSANDBOX_CPUPROFILE_DIR"
	StatsDirVar      = "AGENTSANDBOX_STATS_DIR"
)

// Stats is the content of a stats file.
type Stats struct {
	PID      int              `json:"pid"`
	Started  time.Time        `json:"started"`
	Seconds  float64          `json:"wall_seconds"`
	UserCPU  float64          `json:"user_cpu_seconds"`
	SysCPU   float64          `json:"sys_cpu_seconds"`
	MaxRSS   int64            `json:"max_rss_bytes"`
	Requests map[string]int64 `json:"requests"`
	Total    int64            `json:"requests_total"`
	Retries  int64            `json:"retries"`
	// FastPath counts the calls package fastpath answered itself (plans
	// of unchanged resources, state upgrades, refreshes of unchanged
	// objects) and the plans and reads it left to the framework.
	FastPath FastPathCounts `json:"fastpath"`
}

// FastPathCounts are fastpath.Counts.
type FastPathCounts struct {
	PlansFast      int64 `json:"plans_answered"`
	PlansFramework int64 `json:"plans_to_framework"`
	UpgradesFast   int64 `json:"upgrades_answered"`
	// ReadsFast are refreshes of unchanged objects answered from the read
	// marker (one GET each, no framework); ReadsFramework the others.
	ReadsFast      int64 `json:"reads_answered"`
	ReadsFramework int64 `json:"reads_to_framework"`
}

// Start begins what the environment asks for and returns the function that
// finishes it (stops the profile, writes the stats). Errors are reported on
// stderr, which Terraform logs, and never stop the provider.
func Start() (stop func()) {
	t0 := time.Now()
	var finish []func()
	if dir := os.Getenv(CPUProfileDirVar); dir != "" {
		if f, err := create(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())); err != nil {
			warn(err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			warn(err)
			_ = f.Close()
		} else {
			finish = append(finish, func() {
				pprof.StopCPUProfile()
				warn(f.Close())
			})
		}
	}
	if dir := os.Getenv(StatsDirVar); dir != "" {
		finish = append(finish, func() { warn(write(dir, t0)) })
	}
	return func() {
		for _, f := range finish {
			f()
		}
	}
}

func write(dir string, t0 time.Time) error {
	s := Stats{
		PID:      os.Getpid(),
		Started:  t0,
		Seconds:  time.Since(t0).Seconds(),
		Requests: kube.RequestCounts(),
		Total:    kube.RequestCount(),
		Retries:  kube.RetryCount(),
	}
	s.FastPath.PlansFast, s.FastPath.PlansFramework, s.FastPath.UpgradesFast = fastpath.Counts()
	s.FastPath.ReadsFast, s.FastPath.ReadsFramework = fastpath.ReadCounts()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.UserCPU = seconds(ru.Utime)
		s.SysCPU = seconds(ru.Stime)
		s.MaxRSS = ru.Maxrss * 1024 // KiB on Linux
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	f, err := create(dir, fmt.Sprintf("stats-%d.json", s.PID))
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func create(dir, name string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.Create(filepath.Join(dir, name))
}

func seconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

func warn(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentsandbox selfstats: %v\n", err)
	}
}
