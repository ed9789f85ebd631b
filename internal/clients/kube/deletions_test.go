package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// Many deletions in flight share one watch: ten objects deleted one after
// another, each waited for as Terraform's parallel Delete calls do, start
// one watch, and each wait returns once its own object is gone.
func TestWaitDeleted_oneWatchForManyDeletions(t *testing.T) {
	const n = 10
	var objs []*unstructured.Unstructured
	for i := range n {
		objs = append(objs, sandbox("team-a", fmt.Sprintf("agent-%d", i)))
	}
	f := newFakeCluster(t, objs...)
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	done := make([]<-chan error, n)
	for i := range n {
		ref := ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: fmt.Sprintf("agent-%d", i)}
		done[i] = runWait(func() error { return c.WaitDeleted(ctx, ref, nil) })
	}
	f.waitWatching(t, 1)
	// Every wait registered and past its first look at the watch's
	// objects before the first deletion, as when the objects' deletions
	// take a while; a wait that registers only after its object is gone
	// costs a GET (see below). (The informer's add event sets last before
	// that look is done, so last alone does not say it: under load a wait
	// still looking when its object went made a second GET.)
	for registered := 0; registered < n; time.Sleep(20 * time.Millisecond) {
		c.deletions.mu.Lock()
		registered = 0
		for _, dw := range c.deletions.watches {
			for _, ws := range dw.waiters {
				for w := range ws {
					if w.looked && w.last != nil {
						registered++
					}
				}
			}
		}
		c.deletions.mu.Unlock()
	}
	for i := range n {
		select {
		case err := <-done[i]:
			t.Fatalf("wait %d returned before its object was deleted: %v", i, err)
		default:
		}
		if err := f.Resource(sandboxGVR).Namespace("team-a").Delete(ctx, fmt.Sprintf("agent-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := <-done[i]; err != nil {
			t.Fatal(err)
		}
	}
	// A deletion that comes while the watch lingers reuses it: an object
	// already gone is confirmed by one GET, no new watch.
	ref := ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-0"}
	if err := c.WaitDeleted(ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.watches:
		t.Fatal("a second watch was started")
	case <-time.After(200 * time.Millisecond):
	}
	watches, gets := 0, 0
	for _, a := range f.Actions() {
		switch a.GetVerb() {
		case "watch":
			watches++
		case "get":
			gets++
		}
	}
	if watches != 1 || gets != 1 {
		t.Errorf("%d watches and %d GETs for %d deletions; want 1 and 1 (the object already gone)", watches, gets, n+1)
	}
}

// An object held by a finalizer times out naming what holds it; the
// shared watch stops once nobody waits.
func TestWaitDeleted_timeoutNamesTheFinalizer(t *testing.T) {
	stuck := sandbox("team-a", "agent-1")
	stuck.SetFinalizers([]string{"agents.x-k8s.io/cleanup"})
	now := metav1.Now()
	stuck.SetDeletionTimestamp(&now)
	c := NewClientFromDynamic(newFakeCluster(t, stuck), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	ref := ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-1"}
	err := c.WaitDeleted(ctx, ref, nil)
	var we *WaitError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "to be deleted") ||
		!strings.Contains(err.Error(), "waiting for finalizers agents.x-k8s.io/cleanup") {
		t.Fatalf("want a timeout naming the finalizer, got %v", err)
	}
	deadline := time.Now().Add(deletionLinger + 3*time.Second)
	for {
		c.deletions.mu.Lock()
		left := len(c.deletions.watches)
		c.deletions.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle watch was never stopped")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A watch the server forbids fails the wait at once, with the server's
// answer.
func TestWaitDeleted_forbiddenFailsFast(t *testing.T) {
	f := newFakeCluster(t, sandbox("team-a", "agent-1"))
	f.PrependReactor("list", "sandboxes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(sandboxGVR.GroupResource(), "", errors.New(`User "ci" cannot list resource "sandboxes"`))
	})
	c := NewClientFromDynamic(f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := c.WaitDeleted(ctx, ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-1"}, nil)
	if !apierrors.IsForbidden(err) || time.Since(start) > 3*time.Second {
		t.Fatalf("want Forbidden at once, got %v after %v", err, time.Since(start))
	}
}
