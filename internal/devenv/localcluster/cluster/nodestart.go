package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// prepareNode creates the node's network namespace and network, makes
// the kubelet directory a shared mount and starts the unix-socket way to
// the apiserver that node-proxy uses.
func (s *Supervisor) prepareNode(ctx context.Context) error {
	l, o := s.layout, *s.state.Options.RealNode
	// Leftovers of a crashed run in this directory go first.
	if err := cleanupRealNode(l, s.state, s.log.Writer()); err != nil {
		return err
	}
	t0 := time.Now()
	if err := createNetns(l.NodeNetns()); err != nil {
		return err
	}
	if err := setupNodeNetwork(l.NodeNetns(), o); err != nil {
		return err
	}
	if err := createCgroups(s.state); err != nil {
		return err
	}
	// The kubelet mounts volumes below its directory inside its own mount
	// namespace; a shared mount carries them to containerd's.
	dir := l.KubeletDir()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s: %w", dir, err)
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		return fmt.Errorf("making %s a shared mount: %w", dir, err)
	}
	fwd, err := forwardUnixToTCP(ctx, l.APIServerSocket(), fmt.Sprintf("127.0.0.1:%d", s.state.Ports.APIServer), s.log)
	if err != nil {
		return err
	}
	s.apiForward = fwd
	s.log.Printf("real node: network namespace %s, bridge %s %s, ready after %s", l.NodeNetns(), realNodeBridge, o.PodCIDR, time.Since(t0).Round(time.Millisecond))
	return nil
}

// startNode starts the real node's processes: node-proxy, containerd (then
// imports the images), the kubelet and, when configured, the NetworkPolicy
// enforcer: kube-router's network policy controller, unmodified (built in a
// module of its own by build-netpol.sh), with routing and the service
// proxy off. The enforcer starts once the kubelet has registered the node
// (kube-router reads the node's address at start-up and exits without it),
// and the node counts as started only once its top-level chains are in the
// node's iptables: from then on NetworkPolicies are enforced.
func (s *Supervisor) startNode(ctx context.Context, comps map[string]Component) error {
	if err := s.start(comps[NodeProxyName]); err != nil {
		return err
	}
	if err := s.startAndWait(ctx, comps[Containerd], s.containerdReady); err != nil {
		return err
	}
	if err := s.importImages(ctx); err != nil {
		return err
	}
	if err := s.start(comps[Kubelet]); err != nil {
		return err
	}
	if s.state.Options.RealNode.NetPol == "" {
		s.log.Printf("real node: no NetworkPolicy enforcer (--real-node-netpol not given): policies are stored, not enforced")
		return nil
	}
	if err := s.waitNodeRegistered(ctx); err != nil {
		return err
	}
	if err := s.startAndWait(ctx, comps[NetworkPolicies], s.enforcerReady); err != nil {
		return err
	}
	s.log.Printf("real node: NetworkPolicies are enforced by kube-router's network policy controller (iptables and ipsets in %s)", s.layout.NodeNetns())
	return nil
}

// waitNodeRegistered waits until the kubelet has registered the real node,
// and makes sure the enforcer's RBAC exists (up creates it too, possibly
// later than this).
func (s *Supervisor) waitNodeRegistered(ctx context.Context) error {
	cs, err := AdminClient(s.layout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	var last error
	for {
		if last = createNetworkPoliciesRBAC(ctx, cs); last == nil {
			if _, last = cs.CoreV1().Nodes().Get(ctx, RealNodeName, metav1.GetOptions{}); last == nil {
				return nil
			}
		}
		select {
		case ev := <-s.exits:
			s.logTail(ev.c.comp.Name)
			return fmt.Errorf("%s exited while waiting for node %s to register (%v); see %s", ev.c.comp.Name, RealNodeName, ev.c.err, s.layout.Log(ev.c.comp.Name)) //nolint:errorlint // nil for a clean exit, which %w would print as %!w(<nil>)
		case <-ctx.Done():
			return fmt.Errorf("node %s not registered by the kubelet: %v", RealNodeName, last) //nolint:errorlint // last may be nil, which %w would print as %!w(<nil>)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// enforcerReady succeeds once kube-router's top-level chains are hooked
// into the node's iptables (it creates them on its first sync).
func (s *Supervisor) enforcerReady(ctx context.Context) error {
	for _, chain := range EnforcerChains {
		out, err := exec.CommandContext(ctx, "nsenter", "--net="+s.layout.NodeNetns(), "--", "iptables", "-w", "5", "-S", chain).CombinedOutput()
		if err != nil {
			return fmt.Errorf("chain %s not in the node's iptables yet: %w: %s", chain, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// containerdReady asks containerd's CRI for its version.
func (s *Supervisor) containerdReady(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+s.layout.ContainerdSocket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = runtimeapi.NewRuntimeServiceClient(conn).Version(ctx, &runtimeapi.VersionRequest{})
	return err
}

// importImages loads every OCI archive of the images directory into
// containerd's k8s.io namespace, where the CRI (and so the kubelet) finds
// them. Nothing is ever pulled.
func (s *Supervisor) importImages(ctx context.Context) error {
	dir := s.state.Options.RealNode.Images
	files, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no image archives (*.tar) in %s", dir)
	}
	t0 := time.Now()
	for _, f := range files {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		cmd := exec.CommandContext(cctx, "ctr", "--address", s.layout.ContainerdSocket(), "--namespace", "k8s.io",
			"images", "import", "--snapshotter", "overlayfs", f)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("importing %s: %w: %s", f, err, strings.TrimSpace(string(out)))
		}
		s.log.Printf("imported %s: %s", filepath.Base(f), strings.TrimSpace(string(out)))
	}
	s.log.Printf("imported %d image archive(s) in %s", len(files), time.Since(t0).Round(time.Millisecond))
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	return nil
}

// createCgroups creates the node's parent cgroup (the kubelet's
// cgroupRoot) in every hierarchy; the kubelet insists that it exists.
// cgroup v1's cpuset starts empty and must be given the parent's CPUs and
// memory nodes before anything can join it.
func createCgroups(st State) error {
	for _, dir := range cgroupRoots(st) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		if filepath.Base(filepath.Dir(dir)) != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			val, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), val, 0o644); err != nil {
				return fmt.Errorf("setting %s of %s: %w", f, dir, err)
			}
		}
	}
	return nil
}
