//go:build !unix

package selfstats

// rusage has no getrusage to call here (Windows): the stats file reports
// zeros for CPU seconds and peak RSS. The provider's release builds for
// Windows too, and the statistics are a benchmarking aid.
func rusage() (user, sys float64, maxRSS int64) { return 0, 0, 0 }
