package fastpath

import (
	"context"
	"sync"
)

// ObjectKey names the one Kubernetes object a resource's Read GETs.
type ObjectKey struct {
	Group     string `json:"g,omitempty"`
	Version   string `json:"v"`
	Resource  string `json:"r"`
	Namespace string `json:"ns,omitempty"`
	Name      string `json:"n"`
}

// Seen is what one GET of an object returned: its uid and resourceVersion
// when found, or found = false for a 404 of the object itself.
type Seen struct {
	Key             ObjectKey
	Found           bool
	UID             string
	ResourceVersion string
}

// ReadSlot is carried in the context of a ReadResource call that goes
// through the fast path's wrapper. The object layer (internal/object's
// Kind.Read) tells it which object it read, and takes from it the object
// the fast path already fetched, so that a changed object costs one GET in
// all.
type ReadSlot struct {
	mu         sync.Mutex
	reads      int
	seen       Seen
	prefetched *prefetch
}

type prefetch struct {
	seen Seen
	obj  any
}

// slotKey is the context key of a slot of type S.
type slotKey[S any] struct{}

// withSlot returns ctx carrying a new, empty slot of type S.
func withSlot[S any](ctx context.Context) (context.Context, *S) {
	s := new(S)
	return context.WithValue(ctx, slotKey[S]{}, s), s
}

// slotFrom returns the slot of type S ctx carries, or nil.
func slotFrom[S any](ctx context.Context) *S {
	s, _ := ctx.Value(slotKey[S]{}).(*S)
	return s
}

// withReadSlot returns ctx carrying a new, empty read slot.
func withReadSlot(ctx context.Context) (context.Context, *ReadSlot) { return withSlot[ReadSlot](ctx) }

// ReadSlotFrom returns the slot of the ReadResource call ctx belongs to, or
// nil outside of one.
func ReadSlotFrom(ctx context.Context) *ReadSlot { return slotFrom[ReadSlot](ctx) }

// Take returns the object the fast path fetched for key (obj is nil and
// found false for a 404), once; ok is false when nothing was fetched for
// key, and the caller GETs it itself.
func (s *ReadSlot) Take(key ObjectKey) (obj any, found, ok bool) {
	if s == nil {
		return nil, false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prefetched
	if p == nil || p.seen.Key != key {
		return nil, false, false
	}
	s.prefetched = nil
	return p.obj, p.seen.Found, true
}

// Saw records the outcome of a read of an object (a GET, or a prefetched
// object taken). A read that failed must not be recorded.
func (s *ReadSlot) Saw(seen Seen) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	s.seen = seen
}

// only returns what the one read of the call saw; ok is false unless
// exactly one read was recorded.
func (s *ReadSlot) only() (Seen, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen, s.reads == 1
}

func (s *ReadSlot) offer(seen Seen, obj any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prefetched = &prefetch{seen: seen, obj: obj}
}

// WriteSlot is carried in the context of an ApplyResourceChange call that
// goes through the fast path's wrapper. The object layer (internal/object's
// Resource) tells it the object a create or update ended with: the one the
// new state was made from. The wrapper then reads that object into the new
// state, in the process, to mark it (apply.go).
type WriteSlot struct {
	mu     sync.Mutex
	writes int
	last   prefetch
}

// withWriteSlot returns ctx carrying a new, empty write slot.
func withWriteSlot(ctx context.Context) (context.Context, *WriteSlot) {
	return withSlot[WriteSlot](ctx)
}

// WriteSlotFrom returns the slot of the ApplyResourceChange call ctx
// belongs to, or nil outside of one.
func WriteSlotFrom(ctx context.Context) *WriteSlot { return slotFrom[WriteSlot](ctx) }

// Wrote records obj, as seen, as the object the new state is made from.
func (s *WriteSlot) Wrote(seen Seen, obj any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	s.last = prefetch{seen: seen, obj: obj}
}

// only returns what the one Wrote of the call recorded; ok is false unless
// exactly one was recorded.
func (s *WriteSlot) only() (prefetch, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.writes == 1
}

// taken reports whether the prefetched object was taken by a read.
func (s *ReadSlot) taken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefetched == nil
}
