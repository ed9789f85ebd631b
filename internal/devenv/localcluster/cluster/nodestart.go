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
// imports the images), kube-network-policies when configured, and the
// kubelet. kube-network-policies runs unmodified (built in a module of its
// own by build-netpol.sh): it enforces only where the kernel has nft_queue,
// which is logged here; without it (or without --real-node-netpol)
// NetworkPolicies are stored but not enforced.
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
	if s.state.Options.RealNode.NetPol == "" {
		s.log.Printf("real node: no NetworkPolicy enforcer (--real-node-netpol not given): policies are stored, not enforced")
	} else {
		if ok, err := NFTQueueSupported(); err != nil {
			s.log.Printf("real node: %v", err)
		} else if !ok {
			s.log.Printf("real node: this kernel has no nft_queue (CONFIG_NFT_QUEUE): kube-network-policies cannot install its rules, NetworkPolicies are NOT enforced")
		}
		if err := s.start(comps[NetworkPolicies]); err != nil {
			return err
		}
	}
	return s.start(comps[Kubelet])
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
			return fmt.Errorf("importing %s: %v: %s", f, err, strings.TrimSpace(string(out)))
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
