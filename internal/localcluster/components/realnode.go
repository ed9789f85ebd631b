package components

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// NetworkPolicies runs the NetworkPolicy enforcement of the real node:
// sigs.k8s.io/kube-network-policies v0.8.0 (patched, see
// third_party/kube-network-policies/PATCHES.md), wired like its own
// cmd/main.go except that it reads a kubeconfig instead of the in-cluster
// configuration, does not try NRI, and serves no metrics port. It must run
// in the node's network namespace: its nftables table and nfqueue live
// there.
func NetworkPolicies(args []string) int {
	setArgs("kube-network-policies", args)
	fs := flag.NewFlagSet("kube-network-policies", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the controller")
	nodeName := fs.String("hostname-override", "", "name of the node whose pods are enforced")
	queueID := fs.Int("nfqueue-id", 100, "nfqueue number")
	failOpen := fs.Bool("fail-open", false, "accept packets while the controller is not running")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || *nodeName == "" {
		fmt.Fprintln(os.Stderr, "kube-network-policies: --kubeconfig and --hostname-override are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		logger.Error(err, "reading kubeconfig")
		return 1
	}
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	config.ContentType = "application/vnd.kubernetes.protobuf"
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		logger.Error(err, "building the client")
		return 1
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)
	ctrl, err := networkpolicy.NewController(
		clientset,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			FailOpen:            *failOpen,
			QueueID:             *queueID,
			NodeName:            *nodeName,
			NetfilterBug1766Fix: true,
			NRIdisabled:         true,
		},
	)
	if err != nil {
		logger.Error(err, "creating the network policy controller")
		return 1
	}
	errc := make(chan error, 1)
	go func() { errc <- ctrl.Run(ctx) }()
	factory.Start(ctx.Done())
	select {
	case <-ctx.Done():
		// as upstream: give the controller a moment to clean up
		time.Sleep(2 * time.Second)
		return 0
	case err := <-errc:
		utilruntime.HandleError(err)
		if ctx.Err() != nil {
			return 0
		}
		return 1
	}
}
