package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeCluster is a fake dynamic client whose watches announce themselves,
// so a test changes objects only once the wait is really watching (the
// fake, unlike a server, cannot replay what happened before a watch).
type fakeCluster struct {
	*dynamicfake.FakeDynamicClient
	watches chan struct{}
}

func newFakeCluster(t *testing.T, objs ...*unstructured.Unstructured) *fakeCluster {
	t.Helper()
	f := &fakeCluster{
		FakeDynamicClient: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{sandboxGVR: "SandboxList"}),
		watches: make(chan struct{}, 16),
	}
	// Seeded through Create with the GVR: the fake's Add would guess the
	// resource of "Sandbox" as "sandboxs".
	for _, o := range objs {
		if err := f.Tracker().Create(sandboxGVR, o, o.GetNamespace()); err != nil {
			t.Fatal(err)
		}
	}
	f.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := f.Tracker().Watch(a.GetResource(), a.GetNamespace())
		f.watches <- struct{}{}
		return true, w, err
	})
	return f
}

// waitWatching blocks until n more watches have started.
func (f *fakeCluster) waitWatching(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.watches:
		case <-time.After(5 * time.Second):
			t.Fatal("the wait never started watching")
		}
	}
}

func (f *fakeCluster) update(t *testing.T, obj *unstructured.Unstructured) time.Time {
	t.Helper()
	if _, err := f.Resource(sandboxGVR).Namespace(obj.GetNamespace()).Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

func (f *fakeCluster) create(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if _, err := f.Resource(sandboxGVR).Namespace(obj.GetNamespace()).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// withReady sets the Ready condition of a sandbox.
func withReady(u *unstructured.Unstructured, status, reason, message string) *unstructured.Unstructured {
	u = u.DeepCopy()
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"type": "Ready", "status": status, "reason": reason, "message": message,
	}}, "status", "conditions")
	return u
}

func runWait(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

func TestWaitFor_noticesStatusChangeAtOnce(t *testing.T) {
	pending := withReady(sandbox("team-a", "agent-1"), "False", "PodPending", "0/1 nodes are available")
	f := newFakeCluster(t, pending)
	c := NewClientFromDynamic(f, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := runWait(func() error { return c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready")) })
	f.waitWatching(t, 1)
	select {
	case err := <-done:
		t.Fatalf("returned before the object was ready: %v", err)
	default:
	}

	changed := f.update(t, withReady(pending, "True", "Ready", ""))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		if lag := time.Since(changed); lag > 500*time.Millisecond {
			t.Errorf("the change was noticed after %v, want a fraction of a second", lag)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the status change was not noticed")
	}
}

func TestWaitFor_objectCreatedLater(t *testing.T) {
	f := newFakeCluster(t)
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := runWait(func() error { return c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready")) })
	f.waitWatching(t, 1)
	f.create(t, withReady(sandbox("team-a", "agent-1"), "True", "", ""))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWaitFor_timeoutNamesObjectAndReason(t *testing.T) {
	f := newFakeCluster(t, withReady(sandbox("team-a", "agent-1"), "False", "PodPending", "0/1 nodes are available"))
	c := NewClientFromDynamic(f, nil)
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &logs)
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()

	err := c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready"), WithProgressInterval(50*time.Millisecond))
	var we *WaitError
	if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a *WaitError wrapping the deadline, got %v", err)
	}
	for _, s := range []string{"timed out", `Sandbox "team-a/agent-1"`, "Ready=False (PodPending): 0/1 nodes are available"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	if !strings.Contains(logs.String(), "waiting for Kubernetes objects to be ready") || !strings.Contains(logs.String(), "PodPending") {
		t.Errorf("no progress logged: %s", logs.String())
	}
}

func TestWaitFor_failIfMissing(t *testing.T) {
	f := newFakeCluster(t)
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready"), FailIfMissing())
	if !apierrors.IsNotFound(err) {
		t.Fatalf("want NotFound for a missing object, got %v", err)
	}

	// Deleted while waiting.
	f = newFakeCluster(t, sandbox("team-a", "agent-1"))
	c = NewClientFromDynamic(f, nil)
	done := runWait(func() error {
		return c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready"), FailIfMissing())
	})
	f.waitWatching(t, 1)
	if err := f.Resource(sandboxGVR).Namespace("team-a").Delete(ctx, "agent-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !apierrors.IsNotFound(err) {
		t.Fatalf("want NotFound for a deleted object, got %v", err)
	}
}

func TestWaitFor_checkFailureEndsTheWait(t *testing.T) {
	f := newFakeCluster(t, sandbox("team-a", "agent-1"))
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", func(*unstructured.Unstructured) (bool, string, error) {
		return false, "", errors.New("Finished=True (Failed): exit code 1")
	})
	var we *WaitError
	if !errors.As(err, &we) || !we.Failed || !strings.Contains(err.Error(), "exit code 1") || !strings.Contains(err.Error(), `Sandbox "team-a/agent-1"`) {
		t.Fatalf("want a failed *WaitError naming the object, got %v", err)
	}
	if ctx.Err() != nil {
		t.Error("a failed check did not end the wait at once")
	}
}

func TestWaitForAll_timeoutNamesEveryPendingObject(t *testing.T) {
	f := newFakeCluster(t,
		withReady(sandbox("team-a", "ready"), "True", "", ""),
		withReady(sandbox("team-a", "slow"), "False", "Scheduling", "waiting for a gVisor node"),
		withReady(sandbox("team-b", "elsewhere"), "False", "Pulling", "pulling image"),
	)
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	refs := []ObjectRef{
		{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "ready"},
		{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "slow"},
		{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "missing"},
		{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-b", Name: "elsewhere"},
	}
	err := c.WaitForAll(ctx, refs, ConditionReady("Ready"))
	var we *WaitError
	if !errors.As(err, &we) {
		t.Fatalf("want a *WaitError, got %v", err)
	}
	got := map[string]string{}
	for _, p := range we.Pending {
		got[p.Ref.String()] = p.Reason
	}
	want := map[string]string{
		`Sandbox "team-a/slow"`:      "Ready=False (Scheduling): waiting for a gVisor node",
		`Sandbox "team-a/missing"`:   "does not exist yet",
		`Sandbox "team-b/elsewhere"`: "Ready=False (Pulling): pulling image",
	}
	if len(got) != len(want) {
		t.Errorf("pending = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("pending[%s] = %q, want %q", k, got[k], v)
		}
	}

	// And all ready returns nil.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := c.WaitForAll(ctx2, refs[:1], ConditionReady("Ready")); err != nil {
		t.Fatal(err)
	}
}

func TestWaitForSelector(t *testing.T) {
	labelled := func(name string) *unstructured.Unstructured {
		u := withReady(sandbox("team-a", name), "True", "", "")
		u.SetLabels(map[string]string{"pool": "p1"})
		return u
	}
	f := newFakeCluster(t, labelled("a"))
	c := NewClientFromDynamic(f, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := c.WaitForSelector(ctx, sandboxGVR, "team-a", "pool=p1", 2, ConditionReady("Ready"))
	if err == nil || !strings.Contains(err.Error(), `found 1 of at least 2 objects matching labels "pool=p1"`) {
		t.Fatalf("want a timeout counting the objects, got %v", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	done := runWait(func() error {
		return c.WaitForSelector(ctx2, sandboxGVR, "team-a", "pool=p1", 2, ConditionReady("Ready"))
	})
	f.waitWatching(t, 2) // the first wait's watch, then this one's
	f.create(t, labelled("b"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWaitForDeletion(t *testing.T) {
	ref := ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Already gone.
	if err := NewClientFromDynamic(newFakeCluster(t), nil).WaitForDeletion(ctx, ref); err != nil {
		t.Fatal(err)
	}

	// Deleted while waiting.
	f := newFakeCluster(t, sandbox("team-a", "agent-1"))
	c := NewClientFromDynamic(f, nil)
	done := runWait(func() error { return c.WaitForDeletion(ctx, ref) })
	f.waitWatching(t, 1)
	if err := f.Resource(sandboxGVR).Namespace("team-a").Delete(ctx, "agent-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Held by a finalizer: the timeout says so.
	stuck := sandbox("team-a", "agent-1")
	stuck.SetFinalizers([]string{"agents.x-k8s.io/cleanup"})
	now := metav1.Now()
	stuck.SetDeletionTimestamp(&now)
	c = NewClientFromDynamic(newFakeCluster(t, stuck), nil)
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	err := c.WaitForDeletion(short, ref)
	if err == nil || !strings.Contains(err.Error(), "deleted") || !strings.Contains(err.Error(), "waiting for finalizers agents.x-k8s.io/cleanup") {
		t.Fatalf("want a timeout naming the finalizer, got %v", err)
	}
}

func TestWait_forbiddenFailsFast(t *testing.T) {
	f := newFakeCluster(t)
	f.PrependReactor("list", "sandboxes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(sandboxGVR.GroupResource(), "", errors.New(`User "ci" cannot list resource "sandboxes"`))
	})
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready"))
	if !apierrors.IsForbidden(err) || time.Since(start) > 3*time.Second {
		t.Fatalf("want Forbidden at once, got %v after %v", err, time.Since(start))
	}
	d := Diagnostics(err, "wait", ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-1"})
	if !strings.Contains(d[0].Detail(), `"list", "watch"`) {
		t.Errorf("RBAC hint does not name list and watch: %s", d[0].Detail())
	}
}

func TestConditionReady(t *testing.T) {
	check := ConditionReady("Ready")
	base := sandbox("ns", "s")
	base.SetGeneration(3)
	tests := []struct {
		name   string
		mutate func(u *unstructured.Unstructured)
		ready  bool
		reason string
	}{
		{"no conditions", func(*unstructured.Unstructured) {}, false, "no Ready condition reported yet"},
		{"true", func(u *unstructured.Unstructured) { *u = *withReady(u, "True", "", "") }, true, ""},
		{"false with reason", func(u *unstructured.Unstructured) {
			*u = *withReady(u, "False", "Suspended", "operatingMode is Suspended")
		},
			false, "Ready=False (Suspended): operatingMode is Suspended"},
		{"stale observedGeneration", func(u *unstructured.Unstructured) {
			*u = *withReady(u, "True", "", "")
			_ = unstructured.SetNestedField(u.Object, int64(2), "status", "observedGeneration")
		}, false, "the controller has not yet observed generation 3 (at 2)"},
		{"current observedGeneration", func(u *unstructured.Unstructured) {
			*u = *withReady(u, "True", "", "")
			_ = unstructured.SetNestedField(u.Object, int64(3), "status", "observedGeneration")
		}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := base.DeepCopy()
			tt.mutate(u)
			ready, reason, err := check(u)
			if err != nil || ready != tt.ready || reason != tt.reason {
				t.Errorf("got %v, %q, %v; want %v, %q", ready, reason, err, tt.ready, tt.reason)
			}
		})
	}
}

// TestWaitFor_realWatchOutlivesRequestTimeout runs a wait through the real
// HTTP stack against a server that lists, then streams a watch whose only
// interesting event comes after longer than the client's request Timeout.
// A watch bounded by that Timeout would be cut and never see it.
func TestWaitFor_realWatchOutlivesRequestTimeout(t *testing.T) {
	const notReady = `{"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox","metadata":{"name":"agent-1","namespace":"team-a","resourceVersion":"%d"},"status":{"conditions":[{"type":"Ready","status":"%s"}]}}`
	var watchCalls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		if q.Get("watch") != "true" && q.Get("watch") != "1" {
			fmt.Fprintf(w, `{"apiVersion":"agents.x-k8s.io/v1beta1","kind":"SandboxList","metadata":{"resourceVersion":"1"},"items":[`+notReady+`]}`, 1, "False")
			return
		}
		first := watchCalls.Add(1) == 1
		flusher := w.(http.Flusher)
		if q.Get("sendInitialEvents") == "true" {
			// Streaming list: the current state, then the bookmark that
			// says the initial events are complete.
			fmt.Fprintf(w, `{"type":"ADDED","object":`+notReady+"}\n", 1, "False")
			fmt.Fprint(w, `{"type":"BOOKMARK","object":{"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox","metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n")
		}
		flusher.Flush()
		if first {
			select {
			case <-time.After(400 * time.Millisecond):
				fmt.Fprintf(w, `{"type":"MODIFIED","object":`+notReady+"}\n", 2, "True")
				flusher.Flush()
			case <-r.Context().Done():
				return
			}
		}
		<-r.Context().Done()
	}))
	defer srv.Close()

	c, err := NewClient(context.Background(), Config{Host: srv.URL, Token: "t", AllowCredentialsOverHTTP: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitFor(ctx, sandboxGVR, "team-a", "agent-1", ConditionReady("Ready")); err != nil {
		t.Fatalf("the wait missed the event (watch cut by the request timeout?): %v", err)
	}
}
