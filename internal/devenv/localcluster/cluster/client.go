package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// AdminClient returns a clientset built from the cluster's admin kubeconfig.
func AdminClient(l Layout) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", l.Kubeconfig())
	if err != nil {
		return nil, err
	}
	// Start-up creates a handful of objects; no need for client-side
	// throttling against our own fresh apiserver.
	cfg.QPS, cfg.Burst = 100, 200
	// Probes must fail fast while the apiserver is still starting.
	cfg.Timeout = 5 * time.Second
	return kubernetes.NewForConfig(cfg)
}

// apiServerReady succeeds once GET /readyz returns ok.
func apiServerReady(ctx context.Context, l Layout) error {
	cs, err := AdminClient(l)
	if err != nil {
		return err
	}
	return readyz(ctx, cs.Discovery().RESTClient())
}

func readyz(ctx context.Context, rc rest.Interface) error {
	body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("apiserver /readyz: %w %s", err, strings.TrimSpace(string(body)))
	}
	if strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("apiserver /readyz: %s", body)
	}
	return nil
}
