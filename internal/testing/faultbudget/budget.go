// Package faultbudget counts how many requests an injected fault applies
// to. The Kubernetes API fault proxy (internal/testing/faultproxy) and the
// GKE emulator (internal/testing/gkeemu) give their faults the same Skip
// and Times semantics through it.
package faultbudget

import "sync"

// Budget is one fault's allowance. The zero Budget applies to nothing;
// Arm sets it. Its methods are safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	skip    int
	skipped int
	left    int
	hits    int
}

// Arm lets the fault pass the first skip matching requests untouched,
// then apply to times of them: 0 means 1, a negative value means every
// one from then on. Hits are kept across Arm.
func (b *Budget) Arm(skip, times int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if times == 0 {
		times = 1
	}
	b.skip, b.skipped, b.left = skip, 0, times
}

// Take is called for a request the fault matches: it reports whether the
// fault applies to it, and if so uses up one application.
func (b *Budget) Take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.skipped < b.skip {
		b.skipped++
		return false
	}
	if b.left == 0 {
		return false
	}
	if b.left > 0 {
		b.left--
	}
	b.hits++
	return true
}

// GiveBack undoes one Take, for a fault that turned out to do nothing
// (e.g. a watch the client ended before the proxy cut it).
func (b *Budget) GiveBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits--
	if b.left >= 0 {
		b.left++
	}
}

// Hits is how many requests the fault has applied to so far.
func (b *Budget) Hits() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits
}

// Set is the faults injected into one server, in the order they were
// added: the first one that applies to a request decides what happens to
// it. Its methods are safe for concurrent use.
type Set[F any] struct {
	mu     sync.Mutex
	faults []F
}

// Add appends faults (armed by the caller).
func (s *Set[F]) Add(faults ...F) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Clear removes every fault; their hits stay.
func (s *Set[F]) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Pick returns the first fault for which applies is true (applies
// typically matches the request and then takes from the fault's Budget,
// so it is not asked of the faults after it).
func (s *Set[F]) Pick(applies func(F) bool) (F, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if applies(f) {
			return f, true
		}
	}
	var zero F
	return zero, false
}
