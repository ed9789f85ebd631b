package testenv

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/realcontroller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// Bounds of the real controller's phases.
const (
	// controllerCRDWait bounds how long a controller started before its
	// CRDs (Options.NoCRDs: the configuration under test installs them)
	// waits for them.
	controllerCRDWait = 30 * time.Minute
	// controllerStartTimeout bounds the wait for every controller's workers.
	controllerStartTimeout = 2 * time.Minute
	controllerStopGrace    = 20 * time.Second
)

// sandboxCRDNames are the four CRDs every release installs.
var sandboxCRDNames = []string{
	"sandboxes.agents.x-k8s.io",
	"sandboxclaims.extensions.agents.x-k8s.io",
	"sandboxtemplates.extensions.agents.x-k8s.io",
	"sandboxwarmpools.extensions.agents.x-k8s.io",
}

// RealController is upstream's own controller of release p
// (cmd/agent-sandbox-controller of sigs.k8s.io/agent-sandbox at p.Name),
// built from the Go module proxy (cached below the repository's .cache) and
// run out of cluster against the environment's cluster. It waits for the
// release's CRDs to be Established before it starts the process (the
// controller exits when a kind it watches is not served), and reports
// reconciling once the workers of its four controllers run.
func RealController(p releases.Profile, repoRoot string) Controller {
	return RealControllerWith(p, repoRoot, RealControllerOptions{})
}

// RealControllerOptions are what a pod of the release's Deployment would
// get from the cluster and a process out of cluster does not.
type RealControllerOptions struct {
	// SandboxConfig is the content of the ConfigMap agent-sandbox-config
	// the Deployment mounts at /etc/sandbox-config (nil: not mounted; see
	// realcontroller.Options.SandboxConfig, which needs root).
	SandboxConfig map[string]string
	// Args are added to the controller's command line after the harness's
	// own flags (a later flag wins), e.g. --metrics-bind-address for a
	// benchmark that reads upstream's metrics.
	Args []string
}

// RealControllerWith is RealController with o. An empty repoRoot is the
// checkout around the working directory (FindRepoRoot).
func RealControllerWith(p releases.Profile, repoRoot string, o RealControllerOptions) Controller {
	if repoRoot == "" {
		repoRoot, _ = FindRepoRoot() // "" again: the build fails, saying where it looked
	}
	return &realController{release: p, cache: realcontroller.DefaultCacheDir(repoRoot), opts: o}
}

type realController struct {
	release releases.Profile
	cache   string
	opts    RealControllerOptions
	binary  realcontroller.Binary
}

func (c *realController) Name() string {
	if c.binary.Path != "" {
		return c.binary.String()
	}
	return "agent-sandbox-controller " + c.release.Name + " (upstream's, built from the Go module proxy)"
}

// build builds (or finds cached) the binary, before the environment waits
// on anything else, so that the cold build's progress is logged once.
func (c *realController) build(ctx context.Context, h Host) error {
	if c.binary.Path != "" {
		return nil
	}
	b, err := realcontroller.Build(ctx, c.cache, c.release.Name, h.Log)
	if err != nil {
		return err
	}
	c.binary = b
	return nil
}

func (c *realController) Run(ctx context.Context, h Host, reconciling func()) error {
	if err := c.build(ctx, h); err != nil {
		return err
	}
	if err := waitCRDsServed(ctx, h, controllerCRDWait); err != nil {
		return err
	}
	p, err := realcontroller.Start(ctx, realcontroller.Options{
		Binary:        c.binary,
		Kubeconfig:    h.Kubeconfig,
		Dir:           h.Dir,
		Webhook:       realcontroller.Webhook{Port: h.WebhookPort},
		Env:           h.Environ,
		SandboxConfig: c.opts.SandboxConfig,
		Args:          c.opts.Args,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(h.Log, "%s running, pid %d, log %s\n", c.binary, p.Pid(), p.LogPath)
	if err := p.WaitReconciling(ctx, realcontroller.ExtensionsKinds, controllerStartTimeout); err != nil {
		_ = p.Stop(controllerStopGrace)
		return err
	}
	reconciling()
	select {
	case <-ctx.Done():
		return p.Stop(controllerStopGrace)
	case <-p.Done():
		return fmt.Errorf("%s exited while the tests ran: %w; its log (%s) ends:\n%s",
			c.binary, p.Err(), p.LogPath, realcontroller.LogTail(p.LogPath, 30))
	}
}

// waitCRDsServed waits until the four CRDs exist and are Established.
func waitCRDsServed(ctx context.Context, h Host, timeout time.Duration) error {
	dc, err := dynamic.NewForConfig(h.Config)
	if err != nil {
		return err
	}
	crds := dc.Resource(CRDGVR)
	deadline := time.Now().Add(timeout)
	for {
		missing := ""
		for _, name := range sandboxCRDNames {
			u, err := crds.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				missing = name + " does not exist"
				break
			}
			if err != nil {
				missing = err.Error()
				break
			}
			if ok, why := crdEstablished(u); !ok {
				missing = name + ": " + why
				break
			}
		}
		if missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the agent-sandbox CRDs are not served after %s (%s): the controller was not started", timeout, missing)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
