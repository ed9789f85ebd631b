package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Config is what `up` and `run` need.
type Config struct {
	Dir     string
	Options Options
	// Timeout bounds the whole start: processes up, nodes Ready, contents
	// created.
	Timeout time.Duration
	// Stdout gets only the kubeconfig path (so `KUBECONFIG=$(localcluster
	// up --dir D)` works); progress and errors go to Stderr.
	Stdout, Stderr io.Writer
}

// NewLayout resolves dir to an absolute path; every path in the layout (and
// so every process's command line) is absolute, which is what lets `down`
// recognise the processes of this cluster.
func NewLayout(dir string) (Layout, error) {
	if dir == "" {
		return Layout{}, errors.New("--dir is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Layout{}, err
	}
	return Layout{Dir: filepath.Clean(abs)}, nil
}

// Prepare writes everything a fresh cluster needs into the directory:
// ports, PKI, kubeconfigs, kwok stages, state. Files of a previous cluster
// in the same directory (including etcd data) are replaced.
func Prepare(l Layout, o Options) (State, error) {
	if err := o.Validate(); err != nil {
		return State{}, err
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return State{}, err
	}
	// Never delete files below a mount point (a real node's leftovers,
	// which `down` removes first).
	if mounts, err := MountsUnder(l.Dir); err != nil {
		return State{}, err
	} else if len(mounts) > 0 {
		return State{}, fmt.Errorf("%s still has mounts (%s); run `localcluster down --dir %s` first", l.Dir, strings.Join(mounts, ", "), l.Dir)
	}
	if o.RealNode != nil {
		if err := RealNodePreflight(*o.RealNode); err != nil {
			return State{}, err
		}
	}
	for _, p := range l.generated() {
		if err := os.RemoveAll(p); err != nil {
			return State{}, err
		}
	}
	for _, d := range []string{l.LogDir(), l.RunDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return State{}, err
		}
	}
	ports, err := FreePorts(4)
	if err != nil {
		return State{}, err
	}
	bin, err := os.Executable()
	if err != nil {
		return State{}, err
	}
	st := State{
		Version: KubernetesVersion,
		Binary:  bin,
		Ports:   Ports{APIServer: ports[0], EtcdClient: ports[1], EtcdPeer: ports[2], EtcdMetrics: ports[3]},
		Options: o,
	}
	if o.RealNode != nil {
		st.NodeID = nodeID(l)
	}
	svcIP, err := firstServiceIP(o.ServiceCIDR)
	if err != nil {
		return State{}, err
	}
	pki, err := GeneratePKI(net.IP(svcIP.AsSlice()))
	if err != nil {
		return State{}, err
	}
	if err := pki.Write(l); err != nil {
		return State{}, err
	}
	if err := WriteKubeconfig(l.Kubeconfig(), st.APIServerURL(), pki.CA.CertPEM, pki.Admin); err != nil {
		return State{}, err
	}
	if err := os.WriteFile(l.TokenFile(), []byte(pki.AdminToken+"\n"), 0o600); err != nil {
		return State{}, err
	}
	if err := writeConfigFiles(l, st, pki); err != nil {
		return State{}, err
	}
	return st, st.write(l)
}

// Up starts a cluster in the background and returns once it is usable. On
// failure it stops whatever it started.
func Up(ctx context.Context, cfg Config) error {
	l, err := NewLayout(cfg.Dir)
	if err != nil {
		return err
	}
	t0 := time.Now()
	lctx, lcancel := context.WithTimeout(ctx, cfg.Timeout+time.Minute)
	defer lcancel()
	unlock, err := lockDir(lctx, l)
	if err != nil {
		return err
	}
	defer unlock()
	if pid, ok := supervisorRunning(l); ok {
		// Idempotent: a second `up` on a healthy cluster just reports it.
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := apiServerReady(rctx, l); err != nil {
			return fmt.Errorf("a cluster is already running in %s (supervisor pid %d) but is not ready (%w); run `localcluster down --dir %s` first", l.Dir, pid, err, l.Dir)
		}
		fmt.Fprintf(cfg.Stderr, "localcluster: already running in %s\n", l.Dir)
		fmt.Fprintln(cfg.Stdout, l.Kubeconfig())
		return nil
	}
	// Leftovers of a cluster whose supervisor died: make sure no component
	// is still holding the directory before it is reused.
	if err := down(l, cfg.Options.StopGrace, io.Discard); err != nil {
		return err
	}
	st, err := Prepare(l, cfg.Options)
	if err != nil {
		return err
	}

	done, err := startSupervisor(l)
	if err != nil {
		return err
	}

	fmt.Fprintf(cfg.Stderr, "localcluster: starting in %s (apiserver %s, logs in %s)\n", l.Dir, st.APIServerURL(), l.LogDir())
	wctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := waitUsable(wctx, l, st, done, cfg.Stderr, t0); err != nil {
		fmt.Fprintf(cfg.Stderr, "localcluster: up failed after %s: %v\n", time.Since(t0).Round(time.Millisecond), err)
		reportLogs(cfg.Stderr, l)
		fmt.Fprintf(cfg.Stderr, "localcluster: stopping what was started\n")
		if derr := down(l, cfg.Options.StopGrace, cfg.Stderr); derr != nil {
			fmt.Fprintf(cfg.Stderr, "localcluster: cleanup: %v\n", derr)
		}
		return err
	}
	fmt.Fprintf(cfg.Stderr, "localcluster: ready after %s\n", time.Since(t0).Round(time.Millisecond))
	fmt.Fprintln(cfg.Stdout, l.Kubeconfig())
	return nil
}

// startSupervisor starts `localcluster supervise --dir D` in a new session:
// the supervisor outlives its parent, ignores the terminal's signals (Ctrl-C,
// hang-up) and is reparented to init when `up` exits. The returned channel is
// closed when the supervisor exits while the parent still runs.
func startSupervisor(l Layout) (<-chan struct{}, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(l.Log("supervisor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(self, "supervise", "--dir", l.Dir)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = l.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the supervisor: %w", err)
	}
	// Written here as well as by the supervisor itself, so that `down` finds
	// it even if it is killed before it gets that far.
	if err := writePid(l.PidFile("supervisor"), cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		// Reaps the supervisor if it dies while the parent waits. When `up`
		// returns, this goroutine is abandoned with the process.
		_ = cmd.Wait()
		close(done)
	}()
	return done, nil
}

// waitUsable waits for the apiserver, creates the cluster contents and waits
// until the nodes are schedulable and the controller manager has created
// the default service account (without it, pods in the default namespace
// are rejected). stopped is closed if the supervisor exits.
func waitUsable(ctx context.Context, l Layout, st State, stopped <-chan struct{}, progress io.Writer, t0 time.Time) error {
	cs, err := AdminClient(l)
	if err != nil {
		return err
	}
	step := func(what string, try func(context.Context) (string, error)) error {
		var last string
		for {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			detail, err := try(pctx)
			cancel()
			if err == nil && detail == "" {
				fmt.Fprintf(progress, "localcluster: %s after %s\n", what, time.Since(t0).Round(time.Millisecond))
				return nil
			}
			if err != nil {
				last = err.Error()
			} else {
				last = detail
			}
			select {
			case <-stopped:
				return fmt.Errorf("%w while waiting for %s; see %s", errStopped, what, l.Log("supervisor"))
			case <-ctx.Done():
				return fmt.Errorf("timed out waiting for %s: %s", what, last)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if err := step("apiserver ready", func(ctx context.Context) (string, error) {
		return "", readyz(ctx, cs.Discovery().RESTClient())
	}); err != nil {
		return err
	}
	if err := step("RuntimeClass and nodes created", func(ctx context.Context) (string, error) {
		return "", CreateContents(ctx, cs, st.Options)
	}); err != nil {
		return err
	}
	names := NodeNames(st.Options)
	if st.Options.RealNode != nil {
		names = append(names, RealNodeName)
	}
	if err := step(fmt.Sprintf("%d nodes Ready", len(names)), func(ctx context.Context) (string, error) {
		waiting, err := nodesSchedulable(ctx, cs, names)
		if err != nil {
			return "", err
		}
		if len(waiting) > 0 {
			return "nodes not schedulable yet: " + strings.Join(waiting, ", "), nil
		}
		return "", nil
	}); err != nil {
		return err
	}
	return step("default service account", func(ctx context.Context) (string, error) {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "default/default ServiceAccount not created yet (controller manager)", nil
		}
		return "", err
	})
}

// supervisorRunning returns the pid of the live supervisor of l.
func supervisorRunning(l Layout) (int, bool) {
	pid, err := readPid(l.PidFile("supervisor"))
	if err != nil {
		return 0, false
	}
	return pid, processAlive(pid, l.Dir)
}

// reportLogs prints the end of the supervisor log and of the log of every
// component that is no longer running, so a failed start explains itself.
// It must run before the cluster is torn down.
func reportLogs(w io.Writer, l Layout) {
	show := func(name string) {
		data, err := os.ReadFile(l.Log(name))
		if err != nil || len(data) == 0 {
			return
		}
		fmt.Fprintf(w, "---- last lines of %s ----\n%s\n", l.Log(name), tail(data, 15))
	}
	show("supervisor")
	for _, name := range ComponentNames { // only those with a pid file
		pid, err := readPid(l.PidFile(name))
		if err == nil && !processAlive(pid, l.Dir) {
			show(name)
		}
	}
	fmt.Fprintf(w, "(all logs: %s)\n", l.LogDir())
}

func tail(data []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, line := range lines {
		if len(line) > 400 {
			lines[i] = line[:400] + "…"
		}
	}
	return strings.Join(lines, "\n")
}
