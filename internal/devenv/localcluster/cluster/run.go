package cluster

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"
)

// Supervise is the body of the hidden `supervise` subcommand that `up`
// starts in the background.
func Supervise(ctx context.Context, dir string, logOut io.Writer) error {
	l, err := NewLayout(dir)
	if err != nil {
		return err
	}
	s, err := NewSupervisor(l, logOut)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// Run is the foreground mode: it starts the cluster like `up`, prints the
// kubeconfig path once the cluster is usable, and stays until SIGINT or
// SIGTERM, which it turns into `down`. The supervisor is still a separate
// process, so `down` and `status` from another terminal work the same way.
func Run(ctx context.Context, cfg Config) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	l, err := NewLayout(cfg.Dir)
	if err != nil {
		return err
	}
	t0 := time.Now()
	// The lock is held while starting only: `down` from another terminal
	// must be able to stop a cluster that `run` keeps in the foreground.
	unlock, err := lockDir(ctx, l)
	if err != nil {
		return err
	}
	if pid, ok := supervisorRunning(l); ok {
		unlock()
		return fmt.Errorf("a cluster is already running in %s (supervisor pid %d)", l.Dir, pid)
	}
	if err := down(l, cfg.Options.StopGrace, io.Discard); err != nil {
		unlock()
		return err
	}
	st, err := Prepare(l, cfg.Options)
	if err != nil {
		unlock()
		return err
	}
	done, err := startSupervisor(l)
	if err != nil {
		unlock()
		return err
	}
	fmt.Fprintf(cfg.Stderr, "localcluster: starting in %s (apiserver %s, logs in %s)\n", l.Dir, st.APIServerURL(), l.LogDir())
	wctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	err = waitUsable(wctx, l, st, done, cfg.Stderr, t0)
	cancel()
	unlock()
	if err == nil {
		fmt.Fprintf(cfg.Stderr, "localcluster: ready after %s; Ctrl-C stops it\n", time.Since(t0).Round(time.Millisecond))
		fmt.Fprintln(cfg.Stdout, l.Kubeconfig())
		select {
		case <-ctx.Done():
		case <-done:
			err = fmt.Errorf("%w; see %s", errStopped, l.Log("supervisor"))
		}
	} else {
		reportLogs(cfg.Stderr, l)
	}
	if derr := Down(l.Dir, cfg.Options.StopGrace, cfg.Stderr); derr != nil && err == nil {
		err = derr
	}
	return err
}
