package kube

import (
	"context"
	"errors"
	"testing"
	"time"
)

// WaitForObject hands back the object as the check last saw it: when the
// wait succeeds (the state is made from it) and when it times out (the
// status explains the failure).
func TestWaitForObject_returnsTheLastObjectSeen(t *testing.T) {
	ref := ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-1"}

	t.Run("ready", func(t *testing.T) {
		f := newFakeCluster(t, withReady(sandbox("team-a", "agent-1"), "True", "DependenciesReady", "up"))
		last, err := NewClientFromDynamic(f, nil).WaitForObject(context.Background(), ref, ConditionReady("Ready"))
		if err != nil || last == nil {
			t.Fatalf("last=%v err=%v", last, err)
		}
		if s, r, _, _ := Condition(last, "Ready"); s != "True" || r != "DependenciesReady" {
			t.Errorf("last seen Ready=%s (%s)", s, r)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		f := newFakeCluster(t, withReady(sandbox("team-a", "agent-1"), "False", "PodPending", "0/1 nodes are available"))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		last, err := NewClientFromDynamic(f, nil).WaitForObject(ctx, ref, ConditionReady("Ready"))
		var we *WaitError
		if !errors.As(err, &we) {
			t.Fatalf("want a *WaitError, got %v", err)
		}
		if last == nil {
			t.Fatal("the object seen before the timeout was not returned")
		}
		if _, r, m, _ := Condition(last, "Ready"); r != "PodPending" || m != "0/1 nodes are available" {
			t.Errorf("last seen Ready reason %q message %q", r, m)
		}
		// A copy: later changes by the waiter's cache cannot alter it.
		last.SetName("changed")
		if _, r, _, _ := Condition(last, "Ready"); r != "PodPending" {
			t.Error("copy lost its status")
		}
	})
}
