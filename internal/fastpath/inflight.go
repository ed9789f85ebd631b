package fastpath

import "sync/atomic"

// How many resource calls (validate, upgrade, read, plan, apply) the
// process answers at once: Terraform bounds its graph walk with
// -parallelism, and the provider's live heap grows with the calls in flight
// (bench/results/session26-NOTES.md), so the largest number seen is kept
// for the process's stats file.
var (
	callsInFlight    atomic.Int64
	maxCallsInFlight atomic.Int64
)

// callStarted counts a call in flight until the function it returns runs.
func callStarted() (done func()) {
	n := callsInFlight.Add(1)
	for {
		m := maxCallsInFlight.Load()
		if n <= m || maxCallsInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { callsInFlight.Add(-1) }
}

// MaxCallsInFlight is the largest number of resource calls the process
// answered at once.
func MaxCallsInFlight() int64 { return maxCallsInFlight.Load() }
