package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockDir serialises up, run and down on one directory across processes.
// Test packages run as parallel processes, and each may call `up` on a
// shared cluster directory: the first one starts the cluster, the others
// wait for it and then find it running. The lock is an flock on DIR/.lock;
// the kernel releases it when its holder dies, so a crashed `up` never leaves
// it behind. The descriptor is close-on-exec, so the supervisor does not
// inherit it.
func lockDir(ctx context.Context, l Layout) (unlock func(), err error) {
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(l.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", l.Dir, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("another localcluster command holds %s: %w", filepath.Join(l.Dir, ".lock"), context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
