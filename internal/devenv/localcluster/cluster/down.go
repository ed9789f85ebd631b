package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Down stops every process of the cluster in dir and returns once they are
// gone. A cluster that is not running (or a directory that does not exist)
// is not an error. Data, logs and the kubeconfig stay for inspection; `up`
// replaces them.
func Down(dir string, grace time.Duration, progress io.Writer) error {
	l, err := NewLayout(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(l.Dir); os.IsNotExist(err) {
		return nil
	}
	// Wait for an `up` in progress to finish (it is bounded by its own
	// timeout) rather than tearing down what it is starting.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	unlock, err := lockDir(ctx, l)
	if err != nil {
		return err
	}
	defer unlock()
	return down(l, grace, progress)
}

// down is Down for a caller that holds the directory lock.
func down(l Layout, grace time.Duration, progress io.Writer) error {
	t0 := time.Now()

	// The supervisor stops the components in order (clients, apiserver,
	// etcd), each with the grace period, so it needs up to three of them.
	if pid, ok := supervisorRunning(l); ok {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if alive := waitGone([]int{pid}, l.Dir, 3*grace+5*time.Second); len(alive) > 0 {
			fmt.Fprintf(progress, "localcluster: supervisor %d did not stop; killing it\n", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}

	// Whatever is left (the supervisor was killed, or crashed, or was just
	// SIGKILLed above) is stopped by pid file.
	var pids []int
	for _, name := range append([]string{"supervisor"}, ComponentNames...) { // all: pid files tell what ran
		if pid, err := readPid(l.PidFile(name)); err == nil && processAlive(pid, l.Dir) {
			pids = append(pids, pid)
		}
	}
	if err := terminate(pids, l.Dir, grace); err != nil {
		return err
	}
	for _, name := range append([]string{"supervisor"}, ComponentNames...) {
		_ = os.Remove(l.PidFile(name))
	}
	// A real node's pods, mounts, namespace and cgroups outlive a killed
	// supervisor; remove them now.
	if st, err := ReadState(l); err == nil && st.Options.RealNode != nil {
		if err := cleanupRealNode(l, st, progress); err != nil {
			return fmt.Errorf("cleaning up the real node: %w", err)
		}
	}
	fmt.Fprintf(progress, "localcluster: stopped %s in %s\n", l.Dir, time.Since(t0).Round(time.Millisecond))
	return nil
}

// ProcessStatus is the state of one process of a cluster.
type ProcessStatus struct {
	Name    string
	Pid     int
	Running bool
}

// Status describes a cluster directory.
type Status struct {
	Dir        string
	Kubeconfig string
	Server     string
	Processes  []ProcessStatus
	// Ready is true when every process runs and the apiserver answers
	// /readyz.
	Ready      bool
	ReadyError string
}

// GetStatus inspects the cluster in dir without changing anything.
func GetStatus(ctx context.Context, dir string) (Status, error) {
	l, err := NewLayout(dir)
	if err != nil {
		return Status{}, err
	}
	st := Status{Dir: l.Dir, Kubeconfig: l.Kubeconfig()}
	state, err := ReadState(l)
	if err != nil {
		st.ReadyError = errNotRunning.Error()
		return st, nil
	}
	st.Server = state.APIServerURL()
	all := true
	for _, name := range append([]string{"supervisor"}, componentNames(state.Options)...) {
		ps := ProcessStatus{Name: name}
		if pid, err := readPid(l.PidFile(name)); err == nil {
			ps.Pid = pid
			ps.Running = processAlive(pid, l.Dir)
		}
		all = all && ps.Running
		st.Processes = append(st.Processes, ps)
	}
	if !all {
		st.ReadyError = "not all processes are running"
		return st, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := apiServerReady(rctx, l); err != nil {
		st.ReadyError = err.Error()
		return st, nil
	}
	st.Ready = true
	return st, nil
}
