package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Restart policy: a component that dies after start-up is restarted with a
// growing delay, a few times. A component that keeps dying means the cluster
// is broken; then the supervisor stops everything and exits non-zero rather
// than pretending to be a cluster.
const (
	maxRestarts      = 5
	firstRestartWait = time.Second
	// startupTimeout bounds each start-up gate (etcd healthy, apiserver
	// ready) inside the supervisor; `up` has its own, usually shorter,
	// overall timeout and tears the supervisor down when it passes.
	startupTimeout = 5 * time.Minute
)

// child is one running component process.
type child struct {
	comp     Component
	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process has been reaped
	err      error         // exit status, valid after exited is closed
	restarts int
}

type exitEvent struct {
	c *child
}

// Supervisor starts the components of one cluster as child processes of the
// localcluster binary, in dependency order, watches them, and stops them in
// reverse order.
type Supervisor struct {
	layout Layout
	state  State
	binary string
	log    *log.Logger

	mu       sync.Mutex
	children map[string]*child
	exits    chan exitEvent

	apiForward io.Closer // the real node's way to the apiserver
}

// NewSupervisor prepares a supervisor for the cluster in l; the cluster must
// have been prepared by Prepare (state, PKI and configuration on disk).
func NewSupervisor(l Layout, logOut io.Writer) (*Supervisor, error) {
	st, err := ReadState(l)
	if err != nil {
		return nil, fmt.Errorf("reading cluster state (was `up` run for %s?): %w", l.Dir, err)
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return &Supervisor{
		layout:   l,
		state:    st,
		binary:   bin,
		log:      log.New(logOut, "supervisor: ", log.LstdFlags|log.Lmicroseconds),
		children: map[string]*child{},
		exits:    make(chan exitEvent, 16),
	}, nil
}

// Run starts the cluster and blocks until ctx is cancelled or the cluster
// fails for good; it always stops every child before returning. SIGTERM and
// SIGINT cancel it (that is how `down` stops a cluster).
func (s *Supervisor) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	defer s.stopAll()

	if err := writePid(s.layout.PidFile("supervisor"), os.Getpid()); err != nil {
		return err
	}
	defer os.Remove(s.layout.PidFile("supervisor"))

	comps := map[string]Component{}
	for _, c := range Components(s.layout, s.state) {
		comps[c.Name] = c
	}
	if s.state.Options.RealNode != nil {
		// Before any process: the node's namespace and mounts. stopAll
		// removes them again, whatever happens from here on.
		if err := s.prepareNode(ctx); err != nil {
			return fmt.Errorf("preparing the real node: %w", err)
		}
	}

	// Gate 1: etcd answers /health.
	if err := s.startAndWait(ctx, comps[Etcd], s.etcdHealthy); err != nil {
		return err
	}
	// Gate 2: the apiserver answers /readyz (all its post-start hooks ran,
	// including RBAC bootstrap, which the other components need).
	if err := s.startAndWait(ctx, comps[APIServer], s.apiServerReady); err != nil {
		return err
	}
	// The rest only talk to the apiserver and retry on their own.
	for _, name := range []string{ControllerManager, Scheduler, Kwok} {
		if err := s.start(comps[name]); err != nil {
			return err
		}
	}
	if s.state.Options.RealNode != nil {
		if err := s.startNode(ctx, comps); err != nil {
			return err
		}
	}
	s.log.Printf("all components started; apiserver %s", s.state.APIServerURL())

	for {
		select {
		case <-ctx.Done():
			s.log.Printf("stopping: %v", context.Cause(ctx))
			return nil
		case ev := <-s.exits:
			c := ev.c
			if c.restarts >= maxRestarts {
				s.logTail(c.comp.Name)
				return fmt.Errorf("%s exited (%v) and was restarted %d times already; giving up, see %s",
					c.comp.Name, c.err, c.restarts, s.layout.Log(c.comp.Name)) //nolint:errorlint // nil for a clean exit
			}
			wait := firstRestartWait << c.restarts
			s.log.Printf("%s exited unexpectedly (%v); restarting in %s", c.comp.Name, c.err, wait)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			if c.comp.Name == Kwok {
				s.releaseNodeLeases(ctx)
			}
			if err := s.start(c.comp); err != nil {
				return err
			}
			s.mu.Lock()
			s.children[c.comp.Name].restarts = c.restarts + 1
			s.mu.Unlock()
		}
	}
}

// startAndWait starts a component and waits until probe succeeds, failing
// early if the component exits.
func (s *Supervisor) startAndWait(ctx context.Context, comp Component, probe func(context.Context) error) error {
	if err := s.start(comp); err != nil {
		return err
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	var lastErr error
	for {
		select {
		case ev := <-s.exits:
			s.logTail(ev.c.comp.Name)
			return fmt.Errorf("%s exited during start-up (%v); see %s", ev.c.comp.Name, ev.c.err, s.layout.Log(ev.c.comp.Name)) //nolint:errorlint // nil for a clean exit, which %w would print as %!w(<nil>)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %v", comp.Name, time.Since(t0).Round(time.Millisecond), lastErr) //nolint:errorlint // nil when the deadline came before the first probe
		case <-time.After(100 * time.Millisecond):
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		lastErr = probe(pctx)
		pcancel()
		if lastErr == nil {
			s.log.Printf("%s ready after %s", comp.Name, time.Since(t0).Round(time.Millisecond))
			return nil
		}
	}
}

// start launches one component; its exit is reported on s.exits unless the
// supervisor is stopping it.
func (s *Supervisor) start(comp Component) error {
	logFile, err := os.OpenFile(s.layout.Log(comp.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	argv := comp.argv(s.binary)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), comp.Env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = s.layout.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// If the supervisor dies without cleaning up (SIGKILL, OOM), the
		// kernel kills the children too: no orphaned apiserver keeps ports
		// and memory. (Pdeathsig follows the thread that forked; Go does
		// not retire the threads it forks from, so this holds in practice,
		// and `down` kills by pid file as a second line of defence.)
		Pdeathsig: syscall.SIGKILL,
		// Own process group: a Ctrl-C in the terminal of `localcluster run`
		// reaches only the supervisor, which then stops the components in
		// order instead of all of them dying at once.
		Setpgid: true,
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", comp.Name, err)
	}
	c := &child{comp: comp, cmd: cmd, exited: make(chan struct{})}
	s.mu.Lock()
	if old := s.children[comp.Name]; old != nil {
		c.restarts = old.restarts
	}
	s.children[comp.Name] = c
	s.mu.Unlock()
	if err := writePid(s.layout.PidFile(comp.Name), cmd.Process.Pid); err != nil {
		s.log.Printf("writing pid file of %s: %v", comp.Name, err)
	}
	s.log.Printf("started %s (pid %d)", comp.Name, cmd.Process.Pid)

	go func() {
		c.err = cmd.Wait()
		logFile.Close()
		close(c.exited)
		s.mu.Lock()
		current := s.children[comp.Name] == c
		s.mu.Unlock()
		if current {
			s.exits <- exitEvent{c}
		}
	}()
	return nil
}

// stopAll stops the components in reverse dependency order: the clients of
// the apiserver first (together), then the apiserver, then etcd, so nothing
// logs a storm of connection errors while shutting down.
func (s *Supervisor) stopAll() {
	s.mu.Lock()
	children := s.children
	s.children = map[string]*child{} // exits from now on are expected
	s.mu.Unlock()

	stopGroup := func(group ...string) {
		var wg sync.WaitGroup
		for _, name := range group {
			c := children[name]
			if c == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.stopChild(c)
			}()
		}
		wg.Wait()
	}
	if s.state.Options.RealNode != nil {
		// The kubelet first (it would restart what the teardown stops),
		// then every pod through the CRI while containerd still runs.
		stopGroup(Kubelet)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := criTeardown(ctx, s.layout.ContainerdSocket(), s.log.Writer()); err != nil {
			s.log.Printf("removing pods through the CRI: %v (the cleanup below kills what is left)", err)
		}
		cancel()
		stopGroup(Containerd, NetworkPolicies, NodeProxyName)
	}
	for _, group := range [][]string{{Kwok, Scheduler, ControllerManager}, {APIServer}, {Etcd}} {
		stopGroup(group...)
	}
	if s.state.Options.RealNode != nil {
		if s.apiForward != nil {
			s.apiForward.Close()
		}
		if err := cleanupRealNode(s.layout, s.state, s.log.Writer()); err != nil {
			s.log.Printf("cleaning up the real node: %v", err)
		} else {
			s.log.Printf("real node cleaned up (processes, mounts, network namespace, cgroups)")
		}
	}
	s.log.Printf("all components stopped")
}

func (s *Supervisor) stopChild(c *child) {
	defer os.Remove(s.layout.PidFile(c.comp.Name))
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		s.log.Printf("stopped %s", c.comp.Name)
		return
	case <-time.After(s.state.Options.StopGrace):
	}
	s.log.Printf("%s did not stop within %s; killing it", c.comp.Name, s.state.Options.StopGrace)
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// releaseNodeLeases deletes the Leases of the fake nodes before kwok is
// restarted. kwok v0.8.0 tries to create a node's Lease when it starts and,
// when the Lease left by its previous instance already exists, stops renewing
// it; deleting them lets the new instance start clean. (The node heartbeat
// stage keeps the nodes Ready meanwhile.)
func (s *Supervisor) releaseNodeLeases(ctx context.Context) {
	cs, err := AdminClient(s.layout)
	if err != nil {
		s.log.Printf("releasing node leases: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.log.Printf("releasing node leases: %v", err)
		return
	}
	for _, n := range nodes.Items {
		if n.Annotations[FakeNodeAnnotation] != FakeNodeAnnotationValue {
			continue
		}
		err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, n.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Printf("releasing the lease of node %s: %v", n.Name, err)
		}
	}
}

// logTail copies the end of a component's log into the supervisor log when
// the component's exit is fatal: the supervisor log is what `up` shows.
func (s *Supervisor) logTail(name string) {
	data, err := os.ReadFile(s.layout.Log(name))
	if err != nil || len(data) == 0 {
		return
	}
	s.log.Printf("last lines of %s:\n%s", s.layout.Log(name), tail(data, 15))
}

// etcdHealthy probes etcd's plain-HTTP metrics listener.
func (s *Supervisor) etcdHealthy(ctx context.Context) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/health", s.state.Ports.EtcdMetrics)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

func (s *Supervisor) apiServerReady(ctx context.Context) error {
	return apiServerReady(ctx, s.layout)
}

// errStopped reports a supervisor that exited while `up` was waiting.
var errStopped = errors.New("the supervisor exited")
