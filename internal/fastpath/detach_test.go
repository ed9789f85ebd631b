package fastpath

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

type detachKey struct{}

// payload stands for what terraform-plugin-go hangs on a call's context.
type payload [1 << 14]byte

func TestDetach(t *testing.T) {
	t.Run("forwards values and deadline while the call runs, nothing after", func(t *testing.T) {
		deadline := time.Now().Add(time.Hour)
		parent, cancel := context.WithDeadline(context.WithValue(context.Background(), detachKey{}, "v"), deadline)
		defer cancel()
		d, release := detach(parent)
		if d.Value(detachKey{}) != "v" {
			t.Errorf("value not forwarded")
		}
		if got, ok := d.Deadline(); !ok || !got.Equal(deadline) {
			t.Errorf("deadline %v %v, want %v", got, ok, deadline)
		}
		if d.Err() != nil {
			t.Errorf("cancelled before release: %v", d.Err())
		}
		release()
		if d.Value(detachKey{}) != nil {
			t.Errorf("value still forwarded after release")
		}
		if !errors.Is(d.Err(), context.Canceled) {
			t.Errorf("after release: %v, want canceled", d.Err())
		}
	})
	t.Run("the call's cancellation reaches the detached context and its children", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		d, release := detach(parent)
		defer release()
		child, cancelChild := context.WithCancel(d)
		defer cancelChild()
		cancel()
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("child not cancelled")
		}
		if !errors.Is(d.Err(), context.Canceled) {
			t.Errorf("detached: %v, want canceled", d.Err())
		}
	})
	t.Run("a call whose context is already cancelled starts cancelled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		d, release := detach(parent)
		defer release()
		if !errors.Is(d.Err(), context.Canceled) {
			t.Errorf("detached: %v, want canceled at once", d.Err())
		}
	})
	t.Run("a context made after the end is born cancelled", func(t *testing.T) {
		d, release := detach(context.Background())
		release()
		child, cancel := context.WithCancel(d)
		defer cancel()
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("child of a released context not cancelled")
		}
	})
	t.Run("what a child kept after the end does not hold the call's context", func(t *testing.T) {
		p := &payload{}
		w := weak.Make(p)
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), detachKey{}, p))
		d, release := detach(parent)
		// As the framework keeps every call's cancel function.
		_, keep := context.WithCancel(d)
		release()
		cancel()
		for i := 0; i < 3 && w.Value() != nil; i++ {
			runtime.GC()
		}
		if w.Value() != nil {
			t.Errorf("the call's context is still reachable from the kept child")
		}
		runtime.KeepAlive(keep)
	})
	t.Run("no goroutine per call", func(t *testing.T) {
		before := runtime.NumGoroutine()
		var keep []context.CancelFunc
		for i := 0; i < 1000; i++ {
			parent, cancel := context.WithCancel(context.Background())
			d, release := detach(parent)
			_, c := context.WithCancel(d)
			keep = append(keep, c)
			release()
			cancel()
		}
		time.Sleep(100 * time.Millisecond)
		if after := runtime.NumGoroutine(); after > before+10 {
			t.Errorf("%d goroutines after 1000 calls, %d before", after, before)
		}
		runtime.KeepAlive(keep)
	})
}

// TestCallFramework_letsGoOfTheCallsContext: a plan the framework answers
// (the fast path leaves it to the framework) must not leave the call's
// context reachable once it returns. The framework keeps every call's
// cancel function until StopProvider (proto6server/serve.go:24-39); without
// detach the context stays (mutation-checked).
func TestCallFramework_letsGoOfTheCallsContext(t *testing.T) {
	ctx := context.Background()
	_, fast := syntheticServers(t, syntheticSchema())
	typ := syntheticSchema().Type().TerraformType(ctx).(tftypes.Object)
	cfg := objectOf(typ, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "a")})
	d, err := tfprotov6.NewDynamicValue(typ, cfg)
	if err != nil {
		t.Fatal(err)
	}
	null, _ := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	p := &payload{}
	w := weak.Make(p)
	call, cancel := context.WithCancel(context.WithValue(ctx, detachKey{}, p))
	_, delegated0, _ := Counts()
	// Prior private state: a create the fast path leaves to the framework.
	resp, err := fast.PlanResourceChange(call, &tfprotov6.PlanResourceChangeRequest{TypeName: "test_fake",
		PriorState: &null, ProposedNewState: &d, Config: &d, PriorPrivate: []byte(`{"test_key":"dHJ1ZQ=="}`)})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, resp.Diagnostics)
	}
	if _, delegated1, _ := Counts(); delegated1 != delegated0+1 {
		t.Fatalf("control: the plan was not the framework's")
	}
	cancel()
	for i := 0; i < 3 && w.Value() != nil; i++ {
		runtime.GC()
	}
	if w.Value() != nil {
		t.Errorf("the call's context is still reachable after the framework answered")
	}
	// The server lives on, as in a provider process (a server no longer
	// referenced would take what it keeps with it).
	runtime.KeepAlive(fast)
}
