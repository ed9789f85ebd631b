package cluster

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criTeardown stops and removes every pod sandbox through containerd's CRI,
// as the kubelet would on pod deletion: the runtime kills the containers
// (runsc/runc), the CNI plugins release the address and remove the veth,
// and containerd unmounts root file systems and the pod's namespace.
func criTeardown(ctx context.Context, socket string, progress io.Writer) error {
	if _, err := os.Stat(socket); err != nil {
		return nil
	}
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rs := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range list.Items {
		if _, err := rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping pod sandbox %s (%s/%s): %w", sb.Id[:12], sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
			continue
		}
		if _, err := rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing pod sandbox %s: %w", sb.Id[:12], err))
		}
	}
	if len(list.Items) > 0 {
		fmt.Fprintf(progress, "removed %d pod sandbox(es) through the CRI\n", len(list.Items))
	}
	return errors.Join(errs...)
}

// nodeProcesses finds every process that belongs to the real node of l:
// anything whose command line names the node's directories or containerd
// socket (shims, runsc sandboxes and gofers, ...), anything in the node's
// cgroups, and anything inside the node's network namespace. The calling
// process is never included.
func nodeProcesses(l Layout, s State) []int {
	markers := [][]byte{[]byte(l.NodeDir() + "/"), []byte(l.ContainerdSocket())}
	var netnsIno uint64
	if st, err := os.Stat(l.NodeNetns()); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			netnsIno = sys.Ino
		}
	}
	found := map[int]bool{}
	for _, pid := range cgroupProcs(s) {
		found[pid] = true
	}
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
			for _, m := range markers {
				if strings.Contains(string(cmdline), string(m)) {
					found[pid] = true
				}
			}
		}
		if netnsIno != 0 {
			var st unix.Stat_t
			if unix.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &st) == nil && st.Ino == netnsIno {
				found[pid] = true
			}
		}
	}
	delete(found, self)
	pids := make([]int, 0, len(found))
	for pid := range found {
		if processAlive(pid, "") {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

// cgroupRoots lists the cgroup directories of the node: the node's parent
// cgroup in every mounted v1 hierarchy, or in the v2 tree.
func cgroupRoots(s State) []string {
	if s.NodeID == "" {
		return nil
	}
	var roots []string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return []string{filepath.Join("/sys/fs/cgroup", s.CgroupParent())}
	}
	hier, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hier {
		roots = append(roots, filepath.Join("/sys/fs/cgroup", h.Name(), s.CgroupParent()))
	}
	return roots
}

// cgroupProcs returns the pids in the node's cgroups.
func cgroupProcs(s State) []int {
	var pids []int
	for _, root := range cgroupRoots(s) {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			// A cgroup removed while walking, or one not readable, has
			// nothing to report: skip it.
			if err != nil || !d.IsDir() {
				return nil //nolint:nilerr // see above
			}
			data, rerr := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			if rerr != nil {
				return nil //nolint:nilerr // see above
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroups removes the node's cgroup trees, deepest first.
func removeCgroups(s State) error {
	var errs []error
	for _, root := range cgroupRoots(s) {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			var err error
			for range 50 { // a just-killed process leaves its cgroup a moment later
				if err = unix.Rmdir(d); err == nil || errnoIs(err, unix.ENOENT) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// MountsUnder returns the mount points at or below dir, deepest first.
func MountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			mounts = append(mounts, mp)
		}
	}
	sort.SliceStable(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	return mounts, sc.Err()
}

// unescapeMountinfo undoes the octal escapes (\040 for a space, ...) of
// /proc/self/mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountAll unmounts everything at or below dir (repeatedly, since one
// mount point can carry several stacked mounts).
func unmountAll(dir string) error {
	for range 10 {
		mounts, err := MountsUnder(dir)
		if err != nil {
			return err
		}
		if len(mounts) == 0 {
			return nil
		}
		for _, m := range mounts {
			if err := unix.Unmount(m, 0); err != nil {
				_ = unix.Unmount(m, unix.MNT_DETACH)
			}
		}
	}
	mounts, _ := MountsUnder(dir)
	if len(mounts) > 0 {
		return fmt.Errorf("still mounted: %s", strings.Join(mounts, ", "))
	}
	return nil
}

// shimSockets are containerd 1.6's runc-shim sockets of this node: they
// live in /run/containerd/s, named by a hash of containerd's address, the
// namespace and the sandbox id. A shim that is killed leaves its socket.
func shimSockets(l Layout) []string {
	dir := filepath.Join(l.ContainerdState(), "io.containerd.runtime.v2.task", "k8s.io")
	entries, _ := os.ReadDir(dir)
	var socks []string
	for _, e := range entries {
		sum := sha256.Sum256([]byte(filepath.Join(l.ContainerdSocket(), "k8s.io", e.Name())))
		socks = append(socks, filepath.Join("/run/containerd/s", fmt.Sprintf("%x", sum)))
	}
	return socks
}

// cleanupRealNode removes whatever the real node left: processes, mounts,
// the network namespace (with the bridge, veths, iptables rules and ipsets in
// it), cgroups and shim sockets. It is safe to run when nothing is left.
func cleanupRealNode(l Layout, s State, progress io.Writer) error {
	if s.Options.RealNode == nil {
		return nil
	}
	var errs []error
	if pids := nodeProcesses(l, s); len(pids) > 0 {
		fmt.Fprintf(progress, "localcluster: killing %d leftover process(es) of the real node: %v\n", len(pids), pids)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			alive := 0
			for _, pid := range pids {
				if processAlive(pid, "") {
					alive++
				}
			}
			if alive == 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	socks := shimSockets(l)
	if err := unmountAll(l.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := deleteNetns(l.NodeNetns()); err != nil {
		errs = append(errs, err)
	}
	if err := removeCgroups(s); err != nil {
		errs = append(errs, err)
	}
	for _, sock := range socks {
		_ = os.Remove(sock)
	}
	// containerd 1.6 creates these for shim sockets whatever its state
	// directory; remove them when nothing else is in them.
	_ = os.Remove("/run/containerd/s")
	_ = os.Remove("/run/containerd")
	return errors.Join(errs...)
}
