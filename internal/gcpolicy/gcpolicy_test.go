package gcpolicy

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, minHeap uint64
		want          int
	}{
		{0, 48 * mib, MaxPercent},           // nothing live yet: the cap
		{1 * mib, 48 * mib, MaxPercent},     // 4700 % wanted, capped
		{4 * mib, 48 * mib, MaxPercent},     // 1100 % wanted, capped
		{8 * mib, 48 * mib, 500},            // 8 -> 48 MiB
		{12 * mib, 48 * mib, 300},           // 12 -> 48 MiB
		{16 * mib, 48 * mib, 200},           // 16 -> 48 MiB
		{24 * mib, 48 * mib, 100},           // half the floor: Go's default from here on
		{25 * mib, 48 * mib, 100},           // more than half: never below 100
		{200 * mib, 48 * mib, 100},          // a large heap: the default
		{24*mib - 1, 48 * mib, 100},         // just under half: the floor rounds down to 100
		{6 * mib, 64 * mib, (58 * 100) / 6}, // another floor
	} {
		if got := Percent(c.live, c.minHeap); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.live/mib, c.minHeap/mib, got, c.want)
		}
	}
}

func TestApply_leavesTheUsersSettings(t *testing.T) {
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(v, map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}[v])
			before := debug.SetGCPercent(123)
			defer debug.SetGCPercent(before)
			applied, stop := Apply()
			stop()
			if applied {
				t.Fatalf("paced the collector although %s is set", v)
			}
			if got := debug.SetGCPercent(123); got != 123 {
				t.Fatalf("GOGC changed to %d although %s is set", got, v)
			}
		})
	}
}

func TestStart_followsTheLiveHeap(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	const minHeap = 64 << 20
	stop := start(minHeap, time.Millisecond)
	defer func() { stop() }()
	// A small live heap: well above 100 %.
	runtime.GC()
	if p := waitPercent(t, func(p int) bool { return p > 300 }); p <= 300 {
		t.Fatalf("GOGC %d with a small live heap under a %d MiB floor, want more than 300", p, minHeap>>20)
	}
	// Half the floor live: back to Go's default.
	held := make([]byte, minHeap/2+(1<<20))
	for i := range held {
		held[i] = 1
	}
	runtime.GC()
	if p := waitPercent(t, func(p int) bool { return p == 100 }); p != 100 {
		t.Fatalf("GOGC %d with more than half the floor live, want 100", p)
	}
	runtime.KeepAlive(held)
	stop()
	stop = func() {}
	if got := debug.SetGCPercent(100); got != 100 || InEffect() != 0 {
		t.Fatalf("GOGC after stop = %d (InEffect %d), want the 100 in effect before start", got, InEffect())
	}
}

// waitPercent polls the GOGC in effect until ok or a second has passed.
func waitPercent(t *testing.T, ok func(int) bool) int {
	t.Helper()
	var p int
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if p = InEffect(); ok(p) {
			return p
		}
	}
	return p
}
