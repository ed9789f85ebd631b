// Package selfstats lets a benchmark or a profiling session see inside the
// provider process without a debugger: Terraform starts the provider itself,
// several times per command, so the only handle a caller has is the
// environment it passes down.
//
//	AGENTSANDBOX_CPUPROFILE_DIR  write a pprof CPU profile of the whole process to DIR/cpu-<pid>.pprof
//	AGENTSANDBOX_MEMPROFILE_DIR  write pprof heap profiles to DIR/heap-peak-<pid>.pprof (taken when
//	                             the live heap reaches a new high, at most every 200 ms) and
//	                             DIR/heap-exit-<pid>.pprof (on exit, after a collection: what the process
//	                             still holds, and what it allocated in all)
//	AGENTSANDBOX_STATS_DIR       write DIR/stats-<pid>.json on exit: API requests by method and
//	                             resource path (the counters of internal/clients/kube), retries,
//	                             CPU seconds, peak RSS and the Go heap's high-water marks of the
//	                             process, and what package fastpath answered itself
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
	"reflect"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/gcpolicy"
)

// Environment variables read by Start.
const (
	CPUProfileDirVar = "AGENTSANDBOX_CPUPROFILE_DIR"
	MemProfileDirVar = "AGENTSANDBOX_MEMPROFILE_DIR"
	StatsDirVar      = "AGENTSANDBOX_STATS_DIR"
)

// Stats is the content of a stats file.
type Stats struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"wall_seconds"`
	UserCPU float64   `json:"user_cpu_seconds"`
	SysCPU  float64   `json:"sys_cpu_seconds"`
	MaxRSS  int64     `json:"max_rss_bytes"`
	// Memory says where the peak RSS went: the Go heap's high-water marks
	// next to what the runtime holds outside the heap.
	Memory   MemoryStats      `json:"memory"`
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
	// PlansByMarker are the plans among PlansFast answered from the plan
	// marker an apply left (nothing decoded).
	PlansByMarker int64 `json:"plans_by_marker"`
	// DestroysFast are the plans of destroys among PlansFast.
	DestroysFast int64 `json:"destroys_answered"`
	// UpdatesFast are the plans of in-place updates among PlansFast.
	UpdatesFast  int64 `json:"updates_answered"`
	UpgradesFast int64 `json:"upgrades_answered"`
	// ReadsFast are refreshes of unchanged objects answered from the read
	// marker (one GET each, no framework); ReadsFramework the others.
	ReadsFast      int64 `json:"reads_answered"`
	ReadsFramework int64 `json:"reads_to_framework"`
	// ValidationsFast are ValidateResourceConfig calls answered by the
	// fast path's mirror of the framework's validation; ValidationsFramework
	// the others.
	ValidationsFast      int64 `json:"validations_answered"`
	ValidationsFramework int64 `json:"validations_to_framework"`
	// MaxCallsInFlight is the largest number of resource calls (validate,
	// upgrade, read, plan, apply) the process answered at once: a
	// maximum, so Add keeps the larger (the tag says so).
	MaxCallsInFlight int64 `json:"max_calls_in_flight" add:"max"`
	// AppliesMarked are creates and updates of types whose reads the fast
	// path answers that left a read marker in their private state (so the
	// next refresh of the object is the fast path's); AppliesUnmarked the
	// others of those types.
	AppliesMarked   int64 `json:"applies_marked"`
	AppliesUnmarked int64 `json:"applies_unmarked"`
}

// Add adds o's counts to c, as for the processes of one run: every counter
// is summed but a field tagged add:"max" (a maximum such as
// MaxCallsInFlight), which keeps the larger of the two.
func (c *FastPathCounts) Add(o FastPathCounts) {
	cv, ov := reflect.ValueOf(c).Elem(), reflect.ValueOf(o)
	for i := range cv.NumField() {
		f, x := cv.Field(i), ov.Field(i).Int()
		if cv.Type().Field(i).Tag.Get("add") == "max" {
			f.SetInt(max(f.Int(), x))
		} else {
			f.SetInt(f.Int() + x)
		}
	}
}

// MemoryStats are the Go runtime's view of the process's memory at exit.
type MemoryStats struct {
	// HeapSys is the address space the heap has obtained from the OS: it
	// only grows, so it is the heap's high-water mark (released pages
	// included, see HeapReleased).
	HeapSys      uint64 `json:"heap_sys_bytes"`
	HeapReleased uint64 `json:"heap_released_bytes"`
	// HeapPeakLive is the largest live heap (objects reachable at the end
	// of a GC cycle) seen by the sampler, 0 when it did not run.
	HeapPeakLive uint64 `json:"heap_peak_live_bytes"`
	// HeapRetained is the live heap once every call has returned (after
	// two collections at exit): what the process keeps between calls.
	// (After one, what the framework's server still held as the process
	// stopped was counted: it kept every call's context until then, see
	// internal/fastpath/detach.go; a `terraform plan -destroy` of 3000
	// objects showed 41 MiB after one collection and 3 MiB after two.)
	HeapRetained uint64 `json:"heap_retained_bytes"`
	// Sys is all memory obtained from the OS (heap, stacks, runtime
	// structures); the rest of the RSS is the binary's mapped pages.
	Sys        uint64 `json:"sys_bytes"`
	StackSys   uint64 `json:"stack_sys_bytes"`
	TotalAlloc uint64 `json:"total_alloc_bytes"`
	NumGC      uint32 `json:"num_gc"`
	Goroutines int    `json:"goroutines"`
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
	memDir := os.Getenv(MemProfileDirVar)
	statsDir := os.Getenv(StatsDirVar)
	if memDir != "" || statsDir != "" {
		stopSampler := sampleHeap(memDir, 50*time.Millisecond)
		finish = append(finish, stopSampler)
	}
	if memDir != "" {
		finish = append(finish, func() {
			// After a collection, in-use is what the process still
			// holds once every call has returned: what it retains.
			// (The profile may be two cycles old: collect twice.)
			runtime.GC()
			runtime.GC()
			warn(writeHeapProfile(memDir, fmt.Sprintf("heap-exit-%d.pprof", os.Getpid())))
		})
	}
	if statsDir != "" {
		finish = append(finish, func() { warn(write(statsDir, t0)) })
	}
	return func() {
		for _, f := range finish {
			f()
		}
	}
}

// peakLive is the largest live heap sampleHeap saw.
var peakLive atomic.Uint64

// sampleHeap reads the live heap (as of the last GC cycle) every tick and
// keeps its maximum; with dir set, it also writes a heap profile each time
// the live heap exceeds the last profiled one by a quarter, so that the
// profile left on exit shows what was live near the peak.
func sampleHeap(dir string, tick time.Duration) (stop func()) {
	var profiled uint64
	var last time.Time
	return gcpolicy.SampleLiveHeap(tick, func(live uint64) {
		if live > peakLive.Load() {
			peakLive.Store(live)
		}
		if dir != "" && live > profiled+profiled/4 && live > 4<<20 && time.Since(last) > 200*time.Millisecond {
			warn(writeHeapProfile(dir, fmt.Sprintf("heap-peak-%d.pprof", os.Getpid())))
			profiled, last = live, time.Now()
		}
	})
}

func writeHeapProfile(dir, name string) error {
	f, err := create(dir, name)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func memoryStats() MemoryStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	sys, released := m.HeapSys, m.HeapReleased
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return MemoryStats{
		HeapSys: sys, HeapReleased: released, HeapPeakLive: peakLive.Load(), HeapRetained: m.HeapAlloc,
		Sys: m.Sys, StackSys: m.StackSys, TotalAlloc: m.TotalAlloc, NumGC: m.NumGC,
		Goroutines: runtime.NumGoroutine(),
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
		Memory:   memoryStats(),
	}
	s.FastPath.PlansFast, s.FastPath.PlansFramework, s.FastPath.UpgradesFast = fastpath.Counts()
	s.FastPath.ReadsFast, s.FastPath.ReadsFramework = fastpath.ReadCounts()
	s.FastPath.ValidationsFast, s.FastPath.ValidationsFramework = fastpath.ValidateCounts()
	s.FastPath.AppliesMarked, s.FastPath.AppliesUnmarked = fastpath.ApplyMarkCounts()
	s.FastPath.PlansByMarker = fastpath.PlanMarkerCount()
	s.FastPath.DestroysFast = fastpath.DestroyCount()
	s.FastPath.UpdatesFast, _ = fastpath.UpdateCounts()
	s.FastPath.MaxCallsInFlight = fastpath.MaxCallsInFlight()
	s.UserCPU, s.SysCPU, s.MaxRSS = rusage()
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

func warn(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentsandbox selfstats: %v\n", err)
	}
}
