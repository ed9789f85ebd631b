package fastpath

import (
	"sync"
	"testing"
)

// Calls held open at once are counted at once; a finished call no longer is.
func TestCallsInFlight(t *testing.T) {
	before := callsInFlight.Load()
	k := MaxCallsInFlight() - before + 3
	var started, release sync.WaitGroup
	release.Add(1)
	var finished sync.WaitGroup
	for range k {
		started.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			done := callStarted()
			started.Done()
			release.Wait()
			done()
		}()
	}
	started.Wait()
	if got := MaxCallsInFlight(); got < before+k {
		t.Errorf("max calls in flight %d, want at least %d", got, before+k)
	}
	release.Done()
	finished.Wait()
	if got := callsInFlight.Load(); got != before {
		t.Errorf("%d calls in flight after they all finished, want %d", got, before)
	}
}
