// Package components holds the in-process entry points of every control-plane
// component the multi-call localcluster binary can become. Each entry point
// runs in its own process (the supervisor starts `localcluster <component>
// ...`), so the components never share global state such as flag sets,
// klog configuration or Prometheus registries.
package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // CronJob time zones, as the upstream main packages do

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/localcluster/cluster"
)

// Main is a component entry point: it gets the arguments after the
// subcommand and returns the process exit code.
type Main func(args []string) int

// All maps subcommand names to entry points.
var All = map[string]Main{
	"etcd":                    Etcd,
	"kube-apiserver":          APIServer,
	"kube-controller-manager": ControllerManager,
	"kube-scheduler":          Scheduler,
	"kwok":                    Kwok,
	// The real node (`up --real-node`), see realnode.go.
	"kubelet": Kubelet,
}

// setArgs makes os.Args look as if the component were its own binary. Some
// libraries read os.Args directly instead of the arguments they are given
// (kwok's config loader does), and it keeps `ps` output readable.
func setArgs(name string, args []string) {
	os.Args = append([]string{name}, args...)
}

// Etcd runs an etcd server. etcdmain.Main exits the process itself on
// errors and on SIGTERM.
func Etcd(args []string) int {
	setArgs("etcd", args)
	etcdmain.Main(os.Args)
	return 0
}

// APIServer runs kube-apiserver.
func APIServer(args []string) int {
	setArgs("kube-apiserver", args)
	cmd := apiserver.NewAPIServerCommand()
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// ControllerManager runs kube-controller-manager.
func ControllerManager(args []string) int {
	setArgs("kube-controller-manager", args)
	cmd := controllermanager.NewControllerManagerCommand()
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// Scheduler runs kube-scheduler.
func Scheduler(args []string) int {
	setArgs("kube-scheduler", args)
	cmd := scheduler.NewSchedulerCommand()
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// Kubelet runs the kubelet of the real node.
func Kubelet(args []string) int {
	setArgs("kubelet", args)
	if spec := os.Getenv(cluster.KubeletMountsEnv); spec != "" {
		if err := cluster.IsolateKubeletMounts(spec); err != nil {
			fmt.Fprintf(os.Stderr, "kubelet: %v\n", err)
			return 1
		}
	}
	cmd := kubelet.NewKubeletCommand(context.Background())
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// Kwok runs the kwok controller, wired the way its own main package does it.
func Kwok(args []string) int {
	setArgs("kwok", args)
	// A Kubernetes package linked into this binary registers a global
	// string --version flag on pflag.CommandLine; kwok's cobra command then
	// fails with `"version" flag declared as non-bool`. kwok is the only
	// component in this process, so it gets a clean global flag set.
	pflag.CommandLine = pflag.NewFlagSet("kwok", pflag.ExitOnError)

	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.ParseErrorsAllowlist.UnknownFlags = true
	global.Usage = func() {}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, logger := kwoklog.InitFlags(ctx, global)
	ctx, err := kwokconfig.InitFlags(ctx, global)
	if err != nil {
		logger.Error("Init config flags", "err", err)
		return 1
	}
	cmd := kwokcmd.NewCommand(ctx)
	cmd.PersistentFlags().AddFlagSet(global)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		logger.Error("kwok exited", "err", err)
		return 1
	}
	return 0
}
