// Package gcpolicy paces the Go garbage collector of the provider process
// for what a provider process is: short-lived (Terraform starts one or more
// per command and stops them when the command ends), with a small heap kept
// between calls (about 3 MiB after a plan of 1800 objects) and a very high
// allocation rate while it answers (the framework's conversions: about 0.8
// MiB per object and plan, 1.5-10 GB per command of 1800 objects).
//
// With Go's default (GOGC=100: collect when the heap has grown by as much as
// was live after the last collection) such a process collects every few
// MiB allocated: in `make bench` profiles the collector was about a third of
// the provider's CPU. Here the heap may grow to a floor (MinHeap) before a
// collection and, once more than half of that floor is live, to twice what
// is live: Go's default pacing for a large heap, fewer collections for a
// small one. Measured on `terraform plan -refresh=false` of 1800 objects
// (bench/README.md, "Garbage collection"): see the numbers there.
//
// Go has no "minimum heap" setting (GOMEMLIMIT is a ceiling, and a ceiling
// below what is live makes the collector run without pause), so a
// goroutine reads the live heap after collections (runtime/metrics, every
// 50 ms) and sets GOGC to match: never below 100, never above MaxPercent.
// A user who sets GOGC or GOMEMLIMIT in the environment gets exactly that,
// and this package does nothing.
package gcpolicy

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

const (
	// MinHeap is the heap the collector lets the process reach before it
	// collects, while what is live stays under half of it. 32 MiB since
	// the applies and updates allocate less (64 MiB before): 2-6 % more
	// CPU in applies and updates for 15-40 MiB less peak memory, which
	// kept every phase at 81-88 MiB at 3000 objects (bench/README.md).
	MinHeap = 32 << 20
	// MaxPercent bounds GOGC when almost nothing is live.
	MaxPercent = 1000
	// every is how often the live heap is read.
	every = 50 * time.Millisecond
)

// Percent is the GOGC that lets a heap with live bytes live grow to
// max(minHeap, 2*live) before the next collection.
func Percent(live, minHeap uint64) int {
	if live == 0 {
		return MaxPercent
	}
	if 2*live >= minHeap {
		return 100
	}
	p := (minHeap - live) * 100 / live
	return int(min(p, MaxPercent))
}

// Apply starts the pacing unless the environment sets GOGC or GOMEMLIMIT,
// and reports whether it did; stop ends it and restores the GOGC that was
// in effect.
func Apply() (applied bool, stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return false, func() {}
	}
	return true, Start(MinHeap)
}

// Start paces the collector for minHeap whatever the environment says;
// Apply is what the provider calls.
func Start(minHeap uint64) (stop func()) {
	return start(minHeap, every)
}

// LiveHeap is the heap that was live at the end of the last collection
// (runtime/metrics /gc/heap/live:bytes), 0 if the runtime does not say.
func LiveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

func start(minHeap uint64, tick time.Duration) (stop func()) {
	current := Percent(LiveHeap(), minHeap)
	before := debug.SetGCPercent(current)
	inEffect.Store(int64(current))
	stopSampling := SampleLiveHeap(tick, func(live uint64) {
		if p := Percent(live, minHeap); p != current {
			debug.SetGCPercent(p)
			inEffect.Store(int64(p))
			current = p
		}
	})
	return func() {
		stopSampling()
		debug.SetGCPercent(before)
		inEffect.Store(0)
	}
}

// SampleLiveHeap calls f with the live heap (LiveHeap) every tick, from one
// goroutine, until stop is called; stop returns once f has returned for the
// last time.
func SampleLiveHeap(tick time.Duration, f func(live uint64)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			f(LiveHeap())
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// inEffect is the GOGC the pacing last set (0 when it is not running).
var inEffect atomic.Int64

// InEffect is the GOGC the pacing last set, 0 when it is not running.
func InEffect() int { return int(inEffect.Load()) }
