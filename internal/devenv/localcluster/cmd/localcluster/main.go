// Command localcluster runs a real Kubernetes control plane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler) plus kwok fake
// nodes on 127.0.0.1, for tests of the agentsandbox Terraform provider.
//
// It is a multi-call binary: the user-facing commands (up, down, status,
// run) start the same binary again under hidden subcommands, one process per
// component, supervised by `localcluster supervise`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/component-base/version"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/localcluster/cluster"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/localcluster/components"
)

const usage = `localcluster: a local Kubernetes ` + cluster.KubernetesVersion + ` control plane with kwok fake nodes

Usage:
  localcluster up     --dir DIR [--timeout 120s] [node flags]   start in the background; prints the kubeconfig path last
  localcluster down   --dir DIR [--grace 10s]                   stop everything started for DIR
  localcluster status --dir DIR                                 show processes; exit 0 only if running and ready
  localcluster run    --dir DIR [--timeout 120s] [node flags]   like up, in the foreground until Ctrl-C
  localcluster version

Node flags: --system-nodes N --gvisor-nodes N --node-cpu Q --node-memory Q --node-pods N

Real node (opt-in, root only; see README "Real node"):
  --real-node --real-node-gvisor DIR --real-node-images DIR [--real-node-netpol BIN]
  [--real-node-pod-cidr 198.18.0.0/24] [--real-node-cluster-dns 169.254.20.10]
  adds node gvisor-real-0: kubelet + containerd + runsc (gVisor) + CNI bridge + NetworkPolicy enforcer (kube-router)
`

func main() {
	// Multi-call dispatch, busybox style: `localcluster etcd ...` or a link
	// named etcd pointing at the binary.
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if _, ok := components.All[name]; !ok {
		if len(args) == 0 {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	if run, ok := components.All[name]; ok {
		os.Exit(run(args))
	}
	os.Exit(command(name, args))
}

func command(name string, args []string) int {
	fs := flag.NewFlagSet("localcluster "+name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {
		fmt.Fprint(os.Stderr, usage)
		fmt.Fprintf(os.Stderr, "\nFlags of %s:\n", name)
		fs.PrintDefaults()
	}
	def := cluster.DefaultOptions()
	dir := fs.String("dir", "", "cluster directory (created if missing); holds kubeconfig, pki, etcd data, logs, pid files")
	grace := fs.Duration("grace", def.StopGrace, "time each component gets between SIGTERM and SIGKILL")
	var opts cluster.Options
	var timeout time.Duration
	var realNode bool
	realOpts := cluster.DefaultRealNodeOptions()
	if name == "up" || name == "run" {
		fs.DurationVar(&timeout, "timeout", 120*time.Second, "give up (and clean up) if the cluster is not usable within this time")
		fs.IntVar(&opts.SystemNodes, "system-nodes", def.SystemNodes, "fake nodes in the system pool (system-pool-N)")
		fs.IntVar(&opts.GVisorNodes, "gvisor-nodes", def.GVisorNodes, "fake nodes in the gVisor pool (gvisor-pool-N, tainted sandbox.gke.io/runtime=gvisor:NoSchedule)")
		fs.StringVar(&opts.NodeCPU, "node-cpu", def.NodeCPU, "allocatable CPU of every fake node")
		fs.StringVar(&opts.NodeMemory, "node-memory", def.NodeMemory, "allocatable memory of every fake node")
		fs.IntVar(&opts.NodePods, "node-pods", def.NodePods, "pod capacity of every fake node")
		fs.StringVar(&opts.ServiceCIDR, "service-cidr", def.ServiceCIDR, "service cluster IP range")
		fs.StringVar(&opts.PodCIDR, "pod-cidr", def.PodCIDR, "pod IP range, split into one /24 per node")
		fs.BoolVar(&realNode, "real-node", false, "add a real node (kubelet, containerd, runsc, CNI bridge, kube-router as NetworkPolicy enforcer) that runs pods for real; needs root")
		fs.StringVar(&realOpts.GVisor, "real-node-gvisor", "", "directory with runsc and containerd-shim-runsc-v1 (build-gvisor.sh prints it)")
		fs.StringVar(&realOpts.NetPol, "real-node-netpol", "", "kube-router binary (build-netpol.sh prints it), run as the NetworkPolicy enforcer (iptables and ipsets in the node's network namespace)")
		fs.StringVar(&realOpts.Images, "real-node-images", "", "directory of OCI image archives (*.tar, including pause.tar) to import into the real node")
		fs.StringVar(&realOpts.PodCIDR, "real-node-pod-cidr", realOpts.PodCIDR, "the real node's pod range (inside its own network namespace)")
		fs.StringVar(&realOpts.ClusterDNS, "real-node-cluster-dns", realOpts.ClusterDNS, "nameserver in the real node's pods' resolv.conf")
	}

	switch name {
	case "node-proxy":
		return nodeProxy(args)
	case "up", "run", "down", "status", "supervise":
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(os.Stderr, "localcluster %s: unexpected arguments %q\n", name, fs.Args())
			return 2
		}
		if *dir == "" {
			fmt.Fprintf(os.Stderr, "localcluster %s: --dir is required\n", name)
			return 2
		}
	case "version", "--version", "-version":
		fmt.Printf("localcluster %s (kubernetes %s, kwok v0.8.0, etcd v3.7.0)\n", version.Get().GitVersion, cluster.KubernetesVersion)
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Print(usage)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "localcluster: unknown command %q\n\n%s", name, usage)
		return 2
	}
	opts.StopGrace = *grace
	if realNode {
		opts.RealNode = &realOpts
	}

	ctx := context.Background()
	var err error
	switch name {
	case "up":
		err = cluster.Up(ctx, cluster.Config{Dir: *dir, Options: opts, Timeout: timeout, Stdout: os.Stdout, Stderr: os.Stderr})
	case "run":
		err = cluster.Run(ctx, cluster.Config{Dir: *dir, Options: opts, Timeout: timeout, Stdout: os.Stdout, Stderr: os.Stderr})
	case "down":
		err = cluster.Down(*dir, *grace, os.Stderr)
	case "status":
		return status(ctx, *dir, os.Stdout)
	case "supervise":
		err = cluster.Supervise(ctx, *dir, os.Stderr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster %s: %v\n", name, err)
		return 1
	}
	return 0
}

// status prints one line per process and a verdict; the exit code is 0 only
// for a running, ready cluster, so scripts can poll it.
func status(ctx context.Context, dir string, w io.Writer) int {
	st, err := cluster.GetStatus(ctx, dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster status: %v\n", err)
		return 1
	}
	for _, p := range st.Processes {
		state := "stopped"
		if p.Running {
			state = "running"
		}
		pid := "-"
		if p.Pid > 0 {
			pid = fmt.Sprint(p.Pid)
		}
		fmt.Fprintf(w, "%-24s %-8s pid %s\n", p.Name, state, pid)
	}
	if st.Server != "" {
		fmt.Fprintf(w, "%-24s %s\n", "server", st.Server)
		fmt.Fprintf(w, "%-24s %s\n", "kubeconfig", st.Kubeconfig)
	}
	if st.Ready {
		fmt.Fprintln(w, "running")
		return 0
	}
	fmt.Fprintf(w, "not running (%s)\n", st.ReadyError)
	return 1
}

// nodeProxy is the hidden `node-proxy` component of the real node.
func nodeProxy(args []string) int {
	fs := flag.NewFlagSet("localcluster node-proxy", flag.ContinueOnError)
	var cfg cluster.NodeProxyConfig
	fs.String("dir", "", "cluster directory (marks the process as the cluster's)")
	fs.StringVar(&cfg.ListenTCP, "listen", "", "address inside the node's network namespace that leads to the apiserver")
	fs.StringVar(&cfg.APIServerSocket, "apiserver-socket", "", "the supervisor's unix socket to the apiserver")
	fs.StringVar(&cfg.EgressSocket, "egress-socket", "", "unix socket for the apiserver's cluster egress (HTTP CONNECT)")
	fs.StringVar(&cfg.Allowed, "allow", "", "the only host:port the egress may reach (the kubelet)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cluster.NodeProxy(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "node-proxy: %v\n", err)
		return 1
	}
	return 0
}
