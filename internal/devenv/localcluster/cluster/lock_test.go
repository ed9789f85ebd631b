package cluster

import (
	"context"
	"testing"
	"time"
)

func TestLockDir(t *testing.T) {
	l := Layout{Dir: t.TempDir() + "/cluster"} // created by lockDir
	unlock, err := lockDir(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}

	// A second holder (another process in real life; flock locks are per
	// open file, so a second open in this process contends the same way)
	// must wait.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := lockDir(ctx, l); err == nil {
		t.Fatal("second lock acquired while the first is held")
	}

	got := make(chan error, 1)
	go func() {
		u, err := lockDir(context.Background(), l)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(150 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not released after unlock")
	}
}
