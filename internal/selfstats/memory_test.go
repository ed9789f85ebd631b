package selfstats

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestSampleHeap_recordsThePeakAndProfilesIt(t *testing.T) {
	dir := t.TempDir()
	peakLive.Store(0)
	stop := sampleHeap(dir, 10*time.Millisecond)
	const size = 32 << 20
	held := make([]byte, size)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC() // the live heap is what survived the last cycle
	deadline := time.Now().Add(5 * time.Second)
	for peakLive.Load() < size && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	runtime.KeepAlive(held)
	if got := peakLive.Load(); got < size {
		t.Fatalf("peak live heap %d bytes, want at least the %d held", got, size)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "heap-peak-*.pprof"))
	if len(matches) != 1 {
		t.Fatalf("heap profiles at the peak: %v, want one", matches)
	}
	if fi, err := os.Stat(matches[0]); err != nil || fi.Size() == 0 {
		t.Fatalf("heap profile %s empty or unreadable: %v", matches[0], err)
	}
	m := memoryStats()
	if m.HeapPeakLive < size || m.HeapSys < size {
		t.Fatalf("memory stats %+v do not show the %d bytes held", m, size)
	}
}
