package testenv

import (
	"fmt"
	"sync"
	"time"
)

// memorySampler records the peak resident memory of the cluster's processes
// and of this process while the environment runs, so every run reports what
// it cost: the machines are small and several runs may share one.
type memorySampler struct {
	dir  string
	quit chan struct{}
	done chan struct{}

	mu        sync.Mutex
	peak      int64 // footprint of the cluster processes, bytes
	peakRSS   int64 // their summed RSS at that moment, for comparison
	peakProcs int
	peakSelf  int64
}

const memorySampleEvery = 2 * time.Second

func startMemorySampler(dir string) *memorySampler {
	s := &memorySampler{dir: dir, quit: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(memorySampleEvery)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *memorySampler) sample() {
	// Only the command line counts here: cluster components name the run
	// directory, while the test command's processes (which also carry the
	// run's environment marker) are not part of the environment's cost.
	procs, err := scanProcesses("/proc", procMatcher{dir: s.dir})
	if err != nil {
		return
	}
	fp, self := footprint(procs), selfRSS()
	var rss int64
	for _, p := range procs {
		rss += p.RSS
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fp > s.peak {
		s.peak, s.peakRSS, s.peakProcs = fp, rss, len(procs)
	}
	s.peakSelf = max(s.peakSelf, self)
}

// stop takes a last sample and ends sampling.
func (s *memorySampler) stop() *memorySampler {
	s.sample()
	close(s.quit)
	<-s.done
	return s
}

func (s *memorySampler) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("peak memory: cluster and controller %s in %d processes (anonymous memory plus the largest binary once; summed RSS %s); harness %s RSS",
		mib(s.peak), s.peakProcs, mib(s.peakRSS), mib(s.peakSelf))
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }
