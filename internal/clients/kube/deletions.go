package kube

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// One watch confirms many deletions. Terraform deletes resources one RPC
// at a time, up to -parallelism at once, and each deletion that does not
// finish at once (a warm pool deleted in the foreground, an object with
// finalizers) used to start a list+watch of its own: one WATCH request per
// object. WaitDeleted instead shares one informer per resource and
// namespace among all the deletions in flight, kept open for a moment after
// the last one so that the next deletions of the same destroy reuse it.

// deletionLinger is how long an idle shared watch stays open for the next
// deletion. Terraform starts the next deletion as soon as one finishes, so
// a fraction of a second would do; a little more covers a slow plan walk.
const deletionLinger = 2 * time.Second

type deletionHub struct {
	mu      sync.Mutex
	watches map[groupKey]*deletionWatch
}

// deletionWatch is one shared informer and the deletions waiting on it.
type deletionWatch struct {
	key     groupKey
	store   cache.Store
	synced  func() bool
	stop    context.CancelFunc
	idle    *time.Timer
	waiters map[string]map[*deletionWaiter]bool // name -> waiters
	// fatal is a watch error that retrying cannot fix (forbidden, the
	// kind not served): every waiter fails with it.
	fatal error
	// listErr is the last failure to list or watch, for timeouts.
	listErr error
}

type deletionWaiter struct {
	done chan struct{}
	// Guarded by deletionHub.mu.
	// last is the object as last seen, for the timeout error.
	last   *unstructured.Unstructured
	gone   bool
	closed bool
	// looked: confirmAbsent is done (the wait now only listens).
	looked bool
}

// release ends the wait (gone: the object was seen deleted).
func (w *deletionWaiter) release(gone bool) {
	w.gone = w.gone || gone
	if !w.closed {
		w.closed = true
		close(w.done)
	}
}

// WaitDeleted waits until ref no longer exists, through the watch shared by
// every deletion of ref's resource and namespace. The caller has asked for
// the deletion; the object, as the DELETE answered it, is last (it names
// what holds the deletion if the wait times out). The error is a
// *WaitError, as from WaitForDeletion.
func (c *Client) WaitDeleted(ctx context.Context, ref ObjectRef, last *unstructured.Unstructured) error {
	start := time.Now()
	w := &deletionWaiter{done: make(chan struct{}), last: last}
	dw := c.deletions.join(c, ref, w)
	defer c.deletions.leave(dw, ref.Name, w)

	err := dw.confirmAbsent(ctx, c, ref, w, &c.deletions.mu)
	c.deletions.mu.Lock()
	w.looked = true
	c.deletions.mu.Unlock()
	if err != nil {
		return &WaitError{Goal: "deleted", Elapsed: time.Since(start), Failed: true,
			Pending: []PendingObject{{Ref: ref, Reason: err.Error()}}, Err: err}
	}
	select {
	case <-w.done:
	case <-ctx.Done():
	}
	c.deletions.mu.Lock()
	defer c.deletions.mu.Unlock()
	switch {
	case w.gone:
		return nil
	case dw.fatal != nil:
		return &WaitError{Goal: "deleted", Elapsed: time.Since(start), Failed: true,
			Pending: []PendingObject{{Ref: ref, Reason: dw.fatal.Error()}}, Err: dw.fatal}
	}
	reason := "not observed yet"
	if w.last != nil {
		reason = deletionReason(w.last)
	}
	if dw.listErr != nil {
		reason += " (watching failed: " + dw.listErr.Error() + ")"
	}
	err = ctx.Err()
	if err == nil {
		err = context.DeadlineExceeded
	}
	return &WaitError{Goal: "deleted", Elapsed: time.Since(start), Pending: []PendingObject{{Ref: ref, Reason: reason}}, Err: err}
}

// join registers w for ref's name with the shared watch of ref's resource
// and namespace, starting it if none runs.
func (h *deletionHub) join(c *Client, ref ObjectRef, w *deletionWaiter) *deletionWatch {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := groupKey{ref.GVR, ref.Namespace}
	dw := h.watches[key]
	if dw == nil {
		if h.watches == nil {
			h.watches = map[groupKey]*deletionWatch{}
		}
		dw = h.start(c, key)
		h.watches[key] = dw
	}
	if dw.idle != nil {
		dw.idle.Stop()
		dw.idle = nil
	}
	if dw.waiters[ref.Name] == nil {
		dw.waiters[ref.Name] = map[*deletionWaiter]bool{}
	}
	dw.waiters[ref.Name][w] = true
	if dw.fatal != nil {
		w.release(false)
	}
	return dw
}

// leave unregisters w; the last waiter to leave arms the idle timer.
func (h *deletionHub) leave(dw *deletionWatch, name string, w *deletionWaiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(dw.waiters[name], w)
	if len(dw.waiters[name]) == 0 {
		delete(dw.waiters, name)
	}
	if len(dw.waiters) > 0 || dw.idle != nil {
		return
	}
	if dw.fatal != nil {
		h.stopLocked(dw)
		return
	}
	dw.idle = time.AfterFunc(deletionLinger, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(dw.waiters) == 0 && dw.idle != nil {
			h.stopLocked(dw)
		}
	})
}

func (h *deletionHub) stopLocked(dw *deletionWatch) {
	dw.stop()
	if h.watches[dw.key] == dw {
		delete(h.watches, dw.key)
	}
}

// start runs the informer of key: every change of an object some waiter
// waits for updates it, and its deletion (an event, or its absence from a
// relist) releases the waiters.
func (h *deletionHub) start(c *Client, key groupKey) *deletionWatch {
	ctx, cancel := context.WithCancel(context.Background())
	dw := &deletionWatch{key: key, stop: cancel, waiters: map[string]map[*deletionWaiter]bool{}}
	res := c.listWatcher(key.gvr, key.namespace)
	note := func(err error) {
		if err == nil {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		dw.listErr = err
		if isFatalWatchError(err) && dw.fatal == nil {
			dw.fatal = err
			for _, ws := range dw.waiters {
				for w := range ws {
					w.release(false)
				}
			}
			dw.stop()
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := res.List(ctx, o)
			note(err)
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			wi, err := res.Watch(ctx, o)
			note(err)
			return wi, err
		},
	}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, c.watchDynamic),
		&unstructured.Unstructured{}, 0, cache.Indexers{})
	// each applies f to the waiters of the object an event is about (a
	// deletion the informer missed comes as DeletedFinalStateUnknown).
	each := func(obj any, f func(*deletionWaiter, *unstructured.Unstructured)) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		for w := range dw.waiters[u.GetName()] {
			f(w, u)
		}
	}
	seen := func(obj any) { each(obj, func(w *deletionWaiter, u *unstructured.Unstructured) { w.last = u }) }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: func(obj any) { each(obj, func(w *deletionWaiter, _ *unstructured.Unstructured) { w.release(true) }) },
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { note(err) })
	dw.store = inf.GetStore()
	dw.synced = inf.HasSynced
	go inf.RunWithContext(ctx)
	return dw
}

// confirmAbsent settles the case the events cannot: the object is absent
// from the synced watch. Either it was deleted before the watch saw it or
// the watch has not caught up with its creation; one GET tells which.
func (dw *deletionWatch) confirmAbsent(ctx context.Context, c *Client, ref ObjectRef, w *deletionWaiter, mu *sync.Mutex) error {
	// Polled as cache.WaitForCacheSync does, but given up as soon as the
	// wait ends otherwise (a fatal watch error, the object seen deleted).
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !dw.synced() {
		select {
		case <-ctx.Done():
			return nil // the caller reports the deadline
		case <-w.done:
			return nil
		case <-tick.C:
		}
	}
	if obj, exists, _ := dw.store.GetByKey(storeKey(ref)); exists {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			mu.Lock()
			w.last = u
			mu.Unlock()
		}
		return nil // its deletion will be an event
	}
	live, err := c.resource(ref.GVR, ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case apierrors.IsNotFound(err) && !IsResourceNotServed(err):
		w.release(true)
	case err != nil && isFatalWatchError(err):
		return err
	case err == nil:
		w.last = live
	}
	return nil
}

func storeKey(ref ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}
