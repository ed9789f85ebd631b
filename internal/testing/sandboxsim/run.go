package sandboxsim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

const (
	// LabelManagedBy marks every object the stand-in creates (Pods, PVCs,
	// Services, NetworkPolicies, Sandboxes), so nobody mistakes its work for the
	// upstream controller's.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy on those objects.
	ManagedByValue = "agentsandbox-sandboxsim"

	// DefaultLeaseName is the leader-election Lease shared by all instances.
	DefaultLeaseName = "agentsandbox-sandboxsim"
	// DefaultLeaseNamespace holds the Lease; it exists in every cluster.
	DefaultLeaseNamespace = "kube-system"
	// DefaultClusterDomain is used for status.serviceFQDN, as upstream's
	// --cluster-domain default.
	DefaultClusterDomain = "cluster.local"
	// DefaultAllowedLabelDomain is upstream's default for the label domains a
	// claim's additionalPodMetadata may use.
	DefaultAllowedLabelDomain = sandboxapi.DefaultAllowedLabelDomain
	// DefaultWorkers is the number of concurrent reconciles per controller.
	DefaultWorkers = 4

	fieldOwner = "agentsandbox-sandboxsim"
	userAgent  = "agentsandbox-sandboxsim"
)

// Options configures Run. The zero value is the intended test setup: leader
// election on, no listening sockets, and a logger that prints errors only.
type Options struct {
	// DisableLeaderElection makes this instance reconcile unconditionally. Leave
	// it false whenever another instance may be running against the cluster
	// (the acctest harness runs one globally).
	DisableLeaderElection bool
	// LeaseName and LeaseNamespace locate the leader-election Lease; defaults
	// DefaultLeaseName and DefaultLeaseNamespace. Instances only exclude each
	// other when they agree on both.
	LeaseName      string
	LeaseNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (defaults 15s, 10s, 2s as controller-runtime). A leader that is cancelled
	// releases the Lease at once, so a successor normally takes over within
	// RetryPeriod; only a crashed leader costs a full LeaseDuration.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// MetricsBindAddress and HealthProbeBindAddress enable controller-runtime's
	// metrics and health servers; empty disables them (the default). When set,
	// bind to loopback only, e.g. "127.0.0.1:0".
	MetricsBindAddress     string
	HealthProbeBindAddress string

	// Logger receives the stand-in's logs. The zero value prints errors only, to
	// stderr, and stays silent once ctx is cancelled. The first Run in a
	// process also installs it as controller-runtime's and klog's process-wide
	// logger, because leader election and informers log through those globals.
	Logger logr.Logger

	// ClusterDomain is the DNS suffix used in status.serviceFQDN; default
	// DefaultClusterDomain.
	ClusterDomain string
	// Workers is the number of concurrent reconciles per controller; default
	// DefaultWorkers.
	Workers int
	// ConfigNamespace is the namespace of the controller whose part the
	// stand-in plays: the allowed label domains are read from the ConfigMap
	// agent-sandbox-config there when the stand-in starts and whenever the
	// Deployment agent-sandbox-controller there rolls out, as the real
	// controller reads them (see config.go). Default DefaultConfigNamespace.
	ConfigNamespace string

	// Profile is the upstream release whose controller behaviour the
	// stand-in follows where releases differ (package releases): the claim's
	// Ready condition, the warm pool's observedGeneration, what adoption
	// writes, and how soon a claim recovers from a missing template. The
	// zero value means releases.Default.
	Profile releases.Profile

	// Namespaces limits the objects watched to these namespaces; empty means
	// the whole cluster.
	Namespaces []string

	// OnStartedLeading, if set, is called each time this instance becomes the
	// leader and starts reconciling (immediately when leader election is
	// disabled). It must not block.
	OnStartedLeading func()
}

func (o Options) withDefaults() Options {
	if o.LeaseName == "" {
		o.LeaseName = DefaultLeaseName
	}
	if o.LeaseNamespace == "" {
		o.LeaseNamespace = DefaultLeaseNamespace
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = 10 * time.Second
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = 2 * time.Second
	}
	if o.MetricsBindAddress == "" {
		o.MetricsBindAddress = "0" // controller-runtime's spelling of "disabled"
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = DefaultClusterDomain
	}
	if o.ConfigNamespace == "" {
		o.ConfigNamespace = DefaultConfigNamespace
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Profile.Name == "" {
		o.Profile = releases.Default
	}
	return o
}

// Run starts the stand-in controller against the cluster behind cfg and blocks
// until ctx is cancelled, then returns nil. It returns an error early only for
// problems a retry cannot fix (an invalid config or scheme).
//
// Run first waits until the four agent-sandbox CRDs are served, so it may be
// started before they are installed. If the controller manager stops on its own
// (most often because leadership was lost while the API server was slow), Run
// starts a fresh one that competes for the Lease again, instead of leaving the
// cluster without a controller for the rest of a test run.
//
// Deviations from upstream v0.5.x, all deliberate: no metrics, tracing or
// Events; no write-behind batching; no in-memory warm-sandbox queue (claims and
// pools list pool members straight from the API server instead of tracking
// expectations); no v1alpha1 conversion webhook (package testenv serves one
// for the v0.5.x release profiles); no migration of legacy labels
// and no created-by label normalisation; no readiness grace period or
// unschedulable hold for warm pools; a pool member is stale when its blueprint
// hash label differs (upstream also compares specs); a terminating pod never
// counts as Ready; the template's NetworkPolicy is written by server-side
// apply; claim env injection and volume-claim-template merging follow the
// documented policies but not every upstream message.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if cfg == nil {
		return errors.New("sandboxsim: nil rest.Config")
	}
	o := opts.withDefaults()
	if o.Logger.GetSink() == nil {
		// Shutdown makes informers and leader election report errors that
		// mean nothing; the quiet default drops errors once ctx is done.
		var stopping atomic.Bool
		context.AfterFunc(ctx, func() { stopping.Store(true) })
		o.Logger = quietLogger(&stopping)
	}
	logger := o.Logger.WithName("sandboxsim")
	setGlobalLoggers.Do(func() {
		ctrllog.SetLogger(logger)
		klog.SetLogger(logger.WithName("klog"))
	})

	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	if cfg.QPS == 0 {
		// client-go's default of 5 QPS would make filling a warm pool crawl.
		cfg.QPS, cfg.Burst = 100, 200
	}

	scheme, err := newScheme()
	if err != nil {
		return err
	}

	logger.Info("starting agentsandbox-sandboxsim, a test-only stand-in for the agent-sandbox controller (not the upstream controller)",
		"leaderElection", !o.DisableLeaderElection, "lease", o.LeaseNamespace+"/"+o.LeaseName, "releaseProfile", o.Profile.Name)

	if err := waitForCRDs(ctx, cfg, logger); err != nil {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // cancelled while waiting: a normal stop
		}
		return err
	}

	for {
		err := runManager(ctx, cfg, scheme, o, logger)
		if ctx.Err() != nil {
			logger.Info("stopped")
			return nil //nolint:nilerr // whatever the manager said, a cancelled context is a normal stop
		}
		var se setupError
		if errors.As(err, &se) {
			return err
		}
		logger.Error(err, "controller manager stopped unexpectedly; starting a new one")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// setGlobalLoggers installs the first Run's logger as controller-runtime's and
// klog's process-wide logger (leader election and some informer paths log
// only there). Later instances in the same process, such as a test's second
// instance, keep their own logger for everything else.
var setGlobalLoggers sync.Once

// setupError marks failures that happen before the manager starts; retrying
// them would fail the same way.
type setupError struct{ err error }

func (e setupError) Error() string { return "sandboxsim: " + e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, setupError{err}
	}
	if err := sandboxapi.AddToScheme(s); err != nil {
		return nil, setupError{err}
	}
	return s, nil
}

func runManager(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, o Options, logger logr.Logger) error {
	leaseDuration, renewDeadline, retryPeriod := o.LeaseDuration, o.RenewDeadline, o.RetryPeriod
	skipNameValidation := true // several instances may live in one test process
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        logger,
		LeaderElection:                !o.DisableLeaderElection,
		LeaderElectionID:              o.LeaseName,
		LeaderElectionNamespace:       o.LeaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		Cache: cache.Options{
			// Nothing here reads managedFields; dropping them halves cache memory.
			DefaultTransform:  cache.TransformStripManagedFields(),
			DefaultNamespaces: namespaceConfig(o.Namespaces),
			ByObject: map[client.Object]cache.ByObject{
				// Only the controller Deployment, for its rollouts.
				&appsv1.Deployment{}: {
					Namespaces: map[string]cache.Config{o.ConfigNamespace: {}},
					Field:      fields.OneTermEqualSelector("metadata.name", controllerDeploymentName),
				},
			},
		},
		Controller: config.Controller{SkipNameValidation: &skipNameValidation},
	})
	if err != nil {
		return setupError{fmt.Errorf("creating controller manager: %w", err)}
	}
	if o.HealthProbeBindAddress != "" {
		if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
			return setupError{err}
		}
	}
	// Read at every start, as the controller does (a manager that stopped
	// and starts again is a restarted controller).
	domains := &labelDomains{reader: mgr.GetAPIReader(), namespace: o.ConfigNamespace, logger: logger}
	if err := domains.load(ctx); err != nil {
		return fmt.Errorf("reading the allowed label domains: %w", err)
	}
	if err := setupControllers(mgr, o, domains); err != nil {
		return setupError{err}
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// Runnables need leader election by default, so this runs only on the
		// leader: the right place to announce that this instance does the work.
		logger.Info("this instance is the leader and reconciles agent-sandbox objects")
		if o.OnStartedLeading != nil {
			o.OnStartedLeading()
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return setupError{err}
	}
	return mgr.Start(ctx)
}

func namespaceConfig(namespaces []string) map[string]cache.Config {
	if len(namespaces) == 0 {
		return nil
	}
	out := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		out[ns] = cache.Config{}
	}
	return out
}

// setupControllers registers the four reconcilers with mgr.
func setupControllers(mgr ctrl.Manager, o Options, domains *labelDomains) error {
	if err := setupIndexes(mgr); err != nil {
		return err
	}
	if err := (&sandboxReconciler{client: mgr.GetClient(), scheme: mgr.GetScheme(), clusterDomain: o.ClusterDomain}).setup(mgr, o.Workers); err != nil {
		return fmt.Errorf("setting up the Sandbox controller: %w", err)
	}
	if err := (&templateReconciler{client: mgr.GetClient(), scheme: mgr.GetScheme()}).setup(mgr); err != nil {
		return fmt.Errorf("setting up the SandboxTemplate controller: %w", err)
	}
	if err := (&warmPoolReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), scheme: mgr.GetScheme(), profile: o.Profile}).setup(mgr); err != nil {
		return fmt.Errorf("setting up the SandboxWarmPool controller: %w", err)
	}
	if err := (&claimReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), scheme: mgr.GetScheme(), allowedDomains: domains, profile: o.Profile}).setup(mgr, o.Workers); err != nil {
		return fmt.Errorf("setting up the SandboxClaim controller: %w", err)
	}
	if err := domains.setup(mgr); err != nil {
		return fmt.Errorf("setting up the watch of the controller Deployment: %w", err)
	}
	return nil
}

// servedResources lists, per group-version, the resources Run waits for.
var servedResources = map[string][]string{
	agentsv1beta1.GroupVersion.String(): {agentsv1beta1.SandboxResource},
	extv1beta1.GroupVersion.String(): {
		extv1beta1.SandboxTemplateResource,
		extv1beta1.SandboxWarmPoolResource,
		extv1beta1.SandboxClaimResource,
	},
}

// waitForCRDs polls discovery until every resource in servedResources is served,
// so that the controllers' informers do not start against missing kinds.
func waitForCRDs(ctx context.Context, cfg *rest.Config, logger logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return setupError{fmt.Errorf("creating discovery client: %w", err)}
	}
	announced := false
	return wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(context.Context) (bool, error) {
		for gv, resources := range servedResources {
			list, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil || !containsAll(list.APIResources, resources) {
				if !announced {
					logger.Info("waiting for the agent-sandbox CRDs to be served", "groupVersion", gv)
					announced = true
				}
				return false, nil
			}
		}
		return true, nil
	})
}

func containsAll(have []metav1.APIResource, want []string) bool {
	names := make(map[string]bool, len(have))
	for _, r := range have {
		names[r.Name] = true
	}
	for _, w := range want {
		if !names[w] {
			return false
		}
	}
	return true
}

// quietLogger prints errors only, and none once stopping is set: the stand-in
// runs inside test processes whose output should stay readable, but a
// reconcile error while it runs is worth seeing.
func quietLogger(stopping *atomic.Bool) logr.Logger {
	base := funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{})
	return logr.New(errorsOnlySink{LogSink: base.GetSink(), stopping: stopping})
}

// errorsOnlySink drops Info lines at every verbosity and passes errors through
// until stopping is set.
type errorsOnlySink struct {
	logr.LogSink
	stopping *atomic.Bool
}

func (errorsOnlySink) Enabled(int) bool { return false }

func (s errorsOnlySink) Error(err error, msg string, kv ...any) {
	if s.stopping != nil && s.stopping.Load() {
		return
	}
	s.LogSink.Error(err, msg, kv...)
}

func (s errorsOnlySink) WithValues(kv ...any) logr.LogSink {
	return errorsOnlySink{LogSink: s.LogSink.WithValues(kv...), stopping: s.stopping}
}

func (s errorsOnlySink) WithName(name string) logr.LogSink {
	return errorsOnlySink{LogSink: s.LogSink.WithName(name), stopping: s.stopping}
}
