//go:build unix

package selfstats

import (
	"runtime"
	"syscall"
)

// rusage returns the process's user and system CPU seconds and its peak
// resident set size in bytes (zeros when the kernel does not say).
func rusage() (user, sys float64, maxRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	maxRSS = int64(ru.Maxrss) //nolint:unconvert // int32 on some platforms
	if runtime.GOOS != "darwin" {
		maxRSS *= 1024 // KiB everywhere but macOS, which reports bytes
	}
	return seconds(ru.Utime), seconds(ru.Stime), maxRSS
}

func seconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}
