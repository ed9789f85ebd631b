package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// ReadyFunc judges one object while waiting. reason says, in a few words a
// user understands, why the object is not ready yet (it is logged when it
// changes and reported on timeout). A non-nil err means the object can
// never become ready (e.g. a failed condition) and ends the wait at once.
type ReadyFunc func(obj *unstructured.Unstructured) (ready bool, reason string, err error)

// WaitOption tunes a wait.
type WaitOption func(*waitOptions)

type waitOptions struct {
	failIfMissing    bool
	progressInterval time.Duration
}

// FailIfMissing ends a wait with a NotFound error when a named object does
// not exist when the wait starts or is deleted during it. By default a wait
// keeps going: an object created by a controller may appear later, and a
// deleted one may be recreated.
func FailIfMissing() WaitOption { return func(o *waitOptions) { o.failIfMissing = true } }

// WithProgressInterval sets how often, at most, progress is logged
// (default 5s). Every change of an object's reason is logged eventually.
func WithProgressInterval(d time.Duration) WaitOption {
	return func(o *waitOptions) { o.progressInterval = d }
}

// PendingObject is an object a wait was still waiting for, and why.
type PendingObject struct {
	Ref    ObjectRef
	Reason string
}

// WaitError ends a wait that did not succeed: the context expired (Err is
// the context's error and Pending names every object not done, with its
// last reason), or a ReadyFunc said an object failed (Failed is true,
// Pending holds that object and Err the check's error).
type WaitError struct {
	// Goal is what was awaited: "ready" or "deleted".
	Goal    string
	Elapsed time.Duration
	Failed  bool
	Pending []PendingObject
	Err     error
}

func (e *WaitError) Unwrap() error { return e.Err }

func (e *WaitError) Error() string {
	if e.Failed && len(e.Pending) > 0 {
		return fmt.Sprintf("%s failed: %v", e.Pending[0].Ref, e.Err)
	}
	var b strings.Builder
	verb := "timed out"
	if errors.Is(e.Err, context.Canceled) {
		verb = "cancelled"
	}
	fmt.Fprintf(&b, "%s after %s waiting for %d object(s) to be %s: ", verb, e.Elapsed.Round(100*time.Millisecond), len(e.Pending), e.Goal)
	for i, p := range e.Pending {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Ref, p.Reason)
	}
	return b.String()
}

func (e *WaitError) summary() string {
	switch {
	case e.Failed && len(e.Pending) > 0:
		return fmt.Sprintf("%s failed", kindOf(e.Pending[0].Ref))
	case errors.Is(e.Err, context.Canceled):
		return "Wait cancelled"
	case len(e.Pending) == 1 && e.Pending[0].Ref.Name != "":
		return fmt.Sprintf("Timed out waiting for %s", kindOf(e.Pending[0].Ref))
	default:
		return "Timed out waiting for Kubernetes objects"
	}
}

func (e *WaitError) detail() string {
	var b strings.Builder
	if e.Failed && len(e.Pending) > 0 {
		fmt.Fprintf(&b, "%s can not become %s: %v.\n\nFix the cause above (kubectl describe shows the object's events) and apply again.",
			e.Pending[0].Ref, e.Goal, e.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "After %s, these objects were still not %s:\n", e.Elapsed.Round(time.Second), e.Goal)
	for _, p := range e.Pending {
		fmt.Fprintf(&b, "  - %s: %s\n", p.Ref, p.Reason)
	}
	if errors.Is(e.Err, context.Canceled) {
		b.WriteString("\nThe operation was cancelled before they were.")
	} else {
		b.WriteString("\nThe limit is the resource's `timeouts` block: raise it if the cluster is merely slow, " +
			"otherwise look at the objects and their events (kubectl describe) for what holds them up.")
	}
	return b.String()
}

// WaitFor waits until check says the named object is ready, watching it so
// a change is noticed as soon as the API server reports it. It returns nil
// once ready, a *WaitError when ctx ends first (naming the object and its
// last reason) or check reports a failure, a NotFound error with
// FailIfMissing, or the API error that makes watching impossible (e.g. 403).
func (c *Client) WaitFor(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, check ReadyFunc, opts ...WaitOption) error {
	return c.WaitForAll(ctx, []ObjectRef{{GVR: gvr, Namespace: namespace, Name: name}}, check, opts...)
}

// WaitForObject is WaitFor for one object that also returns the object as
// check last saw it (nil when it saw none), whatever the outcome: a caller
// makes its state from it without another GET, and on a timeout it holds
// the status that explains the failure.
func (c *Client) WaitForObject(ctx context.Context, ref ObjectRef, check ReadyFunc, opts ...WaitOption) (*unstructured.Unstructured, error) {
	var mu sync.Mutex
	var last *unstructured.Unstructured
	err := c.WaitFor(ctx, ref.GVR, ref.Namespace, ref.Name, func(obj *unstructured.Unstructured) (bool, string, error) {
		mu.Lock()
		last = obj.DeepCopy()
		mu.Unlock()
		return check(obj)
	}, opts...)
	mu.Lock()
	defer mu.Unlock()
	return last, err
}

// WaitForAll waits until check says every object in refs is ready. Objects
// of one resource and namespace share one list+watch. On timeout the
// *WaitError names every object still not ready and why.
func (c *Client) WaitForAll(ctx context.Context, refs []ObjectRef, check ReadyFunc, opts ...WaitOption) error {
	w := newWaiter("ready", opts)
	for key, names := range groupRefs(refs) {
		w.add(&waitTarget{gvr: key.gvr, namespace: key.namespace, names: names, check: check})
	}
	return w.run(ctx, c)
}

// WaitForSelector waits until at least minCount objects of gvr in namespace
// match labelSelector and check says every matching object is ready.
func (c *Client) WaitForSelector(ctx context.Context, gvr schema.GroupVersionResource, namespace, labelSelector string, minCount int, check ReadyFunc, opts ...WaitOption) error {
	w := newWaiter("ready", opts)
	w.add(&waitTarget{gvr: gvr, namespace: namespace, selector: labelSelector, minCount: minCount, check: check})
	return w.run(ctx, c)
}

// WaitForDeletion waits until none of refs exists any more. Objects still
// present at the deadline are reported with what holds them (finalizers,
// foreground deletion of dependents).
func (c *Client) WaitForDeletion(ctx context.Context, refs ...ObjectRef) error {
	w := newWaiter("deleted", nil)
	for key, names := range groupRefs(refs) {
		w.add(&waitTarget{gvr: key.gvr, namespace: key.namespace, names: names, deletion: true})
	}
	return w.run(ctx, c)
}

type groupKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

func groupRefs(refs []ObjectRef) map[groupKey]map[string]string {
	out := map[groupKey]map[string]string{}
	for _, r := range refs {
		k := groupKey{r.GVR, r.Namespace}
		if out[k] == nil {
			out[k] = map[string]string{}
		}
		out[k][r.Name] = r.Kind
	}
	return out
}

// waitTarget is one list+watch: named objects (names) or a label selector.
type waitTarget struct {
	gvr       schema.GroupVersionResource
	namespace string
	names     map[string]string // name -> kind, if known; nil in selector mode
	selector  string
	minCount  int
	deletion  bool
	check     ReadyFunc

	// Guarded by waiter.mu.
	states map[string]*objState
	// listErr is the last failure to list or watch, reported as the reason
	// of objects never seen.
	listErr error
}

type objState struct {
	kind   string
	exists bool
	ready  bool
	reason string
}

// waiter runs the targets of one wait and keeps the shared state used for
// progress logs and the final error.
type waiter struct {
	goal    string
	opts    waitOptions
	start   time.Time
	targets []*waitTarget

	mu      sync.Mutex
	dirty   bool
	lastLog time.Time
	fatal   error
}

func newWaiter(goal string, opts []WaitOption) *waiter {
	o := waitOptions{progressInterval: 5 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	return &waiter{goal: goal, opts: o, start: time.Now()}
}

func (w *waiter) add(t *waitTarget) {
	t.states = map[string]*objState{}
	for n, kind := range t.names {
		t.states[n] = &objState{kind: kind, reason: "does not exist yet"}
		if t.deletion {
			// Until the first list says otherwise.
			t.states[n].reason = "not observed yet"
		}
	}
	w.targets = append(w.targets, t)
}

func (w *waiter) run(ctx context.Context, c *Client) error {
	if len(w.targets) == 0 {
		return nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	stopLog := w.startProgressLog(runCtx)
	defer stopLog()

	var wg sync.WaitGroup
	for _, t := range w.targets {
		wg.Go(func() {
			if err := w.watchTarget(runCtx, c, t); err != nil {
				w.mu.Lock()
				if w.fatal == nil {
					w.fatal = err
				}
				w.mu.Unlock()
				// One target failing decides the whole wait.
				cancel()
			}
		})
	}
	wg.Wait()

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fatal != nil {
		return w.fatal
	}
	if w.allDoneLocked() {
		tflog.Debug(ctx, "Kubernetes wait finished", map[string]any{"goal": w.goal, "elapsed_ms": time.Since(w.start).Milliseconds()})
		return nil
	}
	err := ctx.Err()
	if err == nil {
		err = context.DeadlineExceeded
	}
	return &WaitError{Goal: w.goal, Elapsed: time.Since(w.start), Pending: w.pendingLocked(), Err: err}
}

// listWatcher lists and watches gvr in namespace (every namespace, or a
// cluster-scoped kind, when namespace is "") through the watch client.
func (c *Client) listWatcher(gvr schema.GroupVersionResource, namespace string) interface {
	List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
} {
	ri := c.watchDynamic.Resource(gvr)
	if namespace != "" {
		return ri.Namespace(namespace)
	}
	return ri
}

// watchTarget list+watches one target until it is done, ctx ends or a
// fatal error occurs; a nil return with ctx done means "gave up".
func (w *waiter) watchTarget(ctx context.Context, c *Client, t *waitTarget) error {
	res := c.listWatcher(t.gvr, t.namespace)
	// A fatal list or watch error (403, type not served) would otherwise
	// have the informer retry silently until the deadline.
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var fatal error
	var fatalMu sync.Mutex
	note := func(err error) {
		if err == nil {
			return
		}
		w.mu.Lock()
		t.listErr = err
		w.dirty = true
		w.mu.Unlock()
		if isFatalWatchError(err) {
			fatalMu.Lock()
			if fatal == nil {
				fatal = err
			}
			fatalMu.Unlock()
			cancel()
		}
	}
	options := func(o *metav1.ListOptions) {
		if len(t.names) == 1 {
			for n := range t.names {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", n).String()
			}
		}
		if t.selector != "" {
			o.LabelSelector = t.selector
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			options(&o)
			l, err := res.List(ctx, o)
			note(err)
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			options(&o)
			wi, err := res.Watch(ctx, o)
			note(err)
			return wi, err
		},
	}

	precondition := func(store cache.Store) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		seen := map[string]bool{}
		for _, item := range store.List() {
			u, ok := item.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			seen[u.GetName()] = true
			if err := w.observeLocked(t, watch.Added, u); err != nil {
				return false, err
			}
		}
		for n, st := range t.states {
			if seen[n] {
				continue
			}
			st.exists = false
			switch {
			case t.deletion:
				st.reason = "deleted"
			case w.opts.failIfMissing:
				return false, apierrors.NewNotFound(t.gvr.GroupResource(), n)
			default:
				st.reason = "does not exist yet"
			}
		}
		t.listErr = nil
		return t.doneLocked(), nil
	}
	condition := func(ev watch.Event) (bool, error) {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			return false, nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := w.observeLocked(t, ev.Type, u); err != nil {
			return false, err
		}
		w.maybeLogLocked(ctx, false)
		return t.doneLocked(), nil
	}

	// The precondition runs once the informer has synced, which
	// cache.WaitForCacheSync polls for every 100ms. Only waits that must
	// act on an object's absence need it; a readiness wait learns all it
	// needs from the initial list's events, and so returns at once for an
	// object that is already ready.
	var pre watchtools.PreconditionFunc
	if t.deletion || w.opts.failIfMissing || (t.names == nil && t.minCount == 0) {
		pre = precondition
	}
	_, err := watchtools.UntilWithSync(tctx, cache.ToListWatcherWithWatchListSemantics(lw, c.watchDynamic),
		&unstructured.Unstructured{}, pre, condition)
	fatalMu.Lock()
	defer fatalMu.Unlock()
	switch {
	case fatal != nil:
		return fatal
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return nil // the caller reports what is still pending
	default:
		return err
	}
}

// observeLocked updates t's state from one object; it returns an error that
// ends the wait (a failed check, or a deletion with FailIfMissing).
func (w *waiter) observeLocked(t *waitTarget, typ watch.EventType, u *unstructured.Unstructured) error {
	name := u.GetName()
	st, ok := t.states[name]
	if !ok {
		if t.names != nil {
			return nil // another object of the same resource and namespace
		}
		st = &objState{}
		t.states[name] = st
	}
	st.kind = u.GetKind()
	before := *st
	defer func() {
		if *st != before {
			w.dirty = true
		}
	}()
	ref := ObjectRef{GVR: t.gvr, Kind: st.kind, Namespace: t.namespace, Name: name}

	if typ == watch.Deleted {
		st.exists, st.ready = false, false
		switch {
		case t.deletion:
			st.reason = "deleted"
		case t.names == nil:
			delete(t.states, name)
		case w.opts.failIfMissing:
			return apierrors.NewNotFound(t.gvr.GroupResource(), name)
		default:
			st.reason = "was deleted; waiting for it to be recreated"
		}
		return nil
	}

	st.exists = true
	if t.deletion {
		st.reason = deletionReason(u)
		return nil
	}
	if u.GetDeletionTimestamp() != nil {
		st.ready, st.reason = false, "is being deleted"
		return nil
	}
	ready, reason, err := t.check(u)
	if err != nil {
		return &WaitError{Goal: w.goal, Elapsed: time.Since(w.start), Failed: true,
			Pending: []PendingObject{{Ref: ref, Reason: err.Error()}}, Err: err}
	}
	if ready {
		reason = "ready"
	} else if reason == "" {
		reason = "not ready"
	}
	st.ready, st.reason = ready, reason
	return nil
}

func deletionReason(u *unstructured.Unstructured) string {
	if u.GetDeletionTimestamp() == nil {
		return "still exists (no deletion requested)"
	}
	fin := u.GetFinalizers()
	if len(fin) == 0 {
		return "deletion in progress"
	}
	for _, f := range fin {
		if f == metav1.FinalizerDeleteDependents {
			return "deletion in progress: waiting for its dependents to be deleted first (foreground)"
		}
	}
	return "deletion in progress: waiting for finalizers " + strings.Join(fin, ", ")
}

func (t *waitTarget) doneLocked() bool {
	if t.deletion {
		for _, st := range t.states {
			if st.exists || st.reason == "not observed yet" {
				return false
			}
		}
		return true
	}
	count := 0
	for _, st := range t.states {
		if st.exists {
			count++
		}
		if (t.names != nil || st.exists) && !st.ready {
			return false
		}
	}
	if t.names == nil && count < t.minCount {
		return false
	}
	return true
}

func (w *waiter) allDoneLocked() bool {
	for _, t := range w.targets {
		if !t.doneLocked() {
			return false
		}
	}
	return true
}

func (w *waiter) pendingLocked() []PendingObject {
	var out []PendingObject
	for _, t := range w.targets {
		for _, n := range slices.Sorted(maps.Keys(t.states)) {
			st := t.states[n]
			done := st.ready
			if t.deletion {
				done = !st.exists && st.reason != "not observed yet"
			}
			if t.names == nil && !st.exists {
				done = true
			}
			if done {
				continue
			}
			reason := st.reason
			if t.listErr != nil && !st.exists {
				reason += " (watching failed: " + t.listErr.Error() + ")"
			}
			out = append(out, PendingObject{Ref: ObjectRef{GVR: t.gvr, Kind: st.kind, Namespace: t.namespace, Name: n}, Reason: reason})
		}
		if t.names == nil && !t.deletion {
			count := 0
			for _, st := range t.states {
				if st.exists {
					count++
				}
			}
			if count < t.minCount {
				reason := fmt.Sprintf("found %d of at least %d objects matching labels %q", count, t.minCount, t.selector)
				if t.listErr != nil {
					reason += " (watching failed: " + t.listErr.Error() + ")"
				}
				out = append(out, PendingObject{Ref: ObjectRef{GVR: t.gvr, Namespace: t.namespace}, Reason: reason})
			}
		}
	}
	return out
}

// maybeLogLocked logs the pending objects if something changed and the
// last log is old enough (or force).
func (w *waiter) maybeLogLocked(ctx context.Context, force bool) {
	if !w.dirty || (!force && time.Since(w.lastLog) < w.opts.progressInterval) {
		return
	}
	w.dirty = false
	w.lastLog = time.Now()
	pending := w.pendingLocked()
	if len(pending) == 0 {
		return
	}
	const shown = 5
	var parts []string
	for i, p := range pending {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(pending)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %s", p.Ref, p.Reason))
	}
	tflog.Info(ctx, "waiting for Kubernetes objects to be "+w.goal, map[string]any{
		"pending":    len(pending),
		"elapsed_s":  int(time.Since(w.start).Seconds()),
		"objects":    strings.Join(parts, "; "),
		"wait_start": w.start.Format(time.RFC3339),
	})
}

// startProgressLog flushes changes that arrived within the throttle window,
// so the last reason is logged even when no further event comes.
func (w *waiter) startProgressLog(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(w.opts.progressInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
				w.mu.Lock()
				w.maybeLogLocked(ctx, true)
				w.mu.Unlock()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// isFatalWatchError says whether listing/watching can never succeed by
// waiting longer: authentication, authorization, or a kind not served.
func isFatalWatchError(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	switch st.Status().Code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	return IsResourceNotServed(err)
}

// ConditionReady returns a ReadyFunc for the common status convention: the
// object is ready when status.conditions has condType with status "True"
// and, if the object reports status.observedGeneration, the controller has
// observed its current generation (so a stale True from before an update
// does not count). The reason quotes the condition's reason and message.
func ConditionReady(condType string) ReadyFunc {
	return func(obj *unstructured.Unstructured) (bool, string, error) {
		gen := obj.GetGeneration()
		if observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); found && gen > 0 && observed < gen {
			return false, fmt.Sprintf("the controller has not yet observed generation %d (at %d)", gen, observed), nil
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if !ok || m["type"] != condType {
				continue
			}
			if observed, ok := m["observedGeneration"].(int64); ok && gen > 0 && observed < gen {
				return false, fmt.Sprintf("condition %s is from generation %d, the object is at %d", condType, observed, gen), nil
			}
			status, _ := m["status"].(string)
			if status == string(metav1.ConditionTrue) {
				return true, "", nil
			}
			reason, _ := m["reason"].(string)
			message, _ := m["message"].(string)
			return false, DescribeCondition(condType, status, reason, message), nil
		}
		return false, DescribeCondition(condType, "", "", ""), nil
	}
}

// Exists is a ReadyFunc for "the object exists".
func Exists(*unstructured.Unstructured) (bool, string, error) { return true, "", nil }
