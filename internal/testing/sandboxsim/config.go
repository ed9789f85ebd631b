package sandboxsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// The controller's allowed label domains, read as upstream reads them: from
// the ConfigMap sandboxapi.ConfigMapName in the controller's namespace,
// mounted into the controller Deployment at sandboxapi.ConfigMountPath and
// read once when the controller starts (see package sandboxapi for the
// upstream lines). The stand-in is not that Deployment's pod, so it plays
// the pod's part: it reads the ConfigMap when it starts, and again whenever
// the Deployment's pod template changes, because a rollout is what restarts
// the real controller. A change to the ConfigMap alone is not seen, as with
// the real controller. When the Deployment exists but does not mount the
// ConfigMap (a core-only install), the default applies; when there is no
// Deployment (the usual test cluster, where the stand-in is the only
// controller), the stand-in reads the ConfigMap as a controller from a
// release that mounts it would.

// DefaultConfigNamespace is where upstream's releases run the controller,
// and so where its ConfigMap and Deployment are.
const DefaultConfigNamespace = sandboxapi.ControllerNamespace

// controllerDeploymentName is the controller Deployment of every upstream
// release.
const controllerDeploymentName = sandboxapi.ControllerDeploymentName

// labelDomains holds the allowed label domains the claim controller checks,
// as last read.
type labelDomains struct {
	reader    client.Reader
	namespace string
	logger    logr.Logger

	mu       sync.Mutex
	domains  []string // effective: never empty
	template string   // digest of the Deployment's pod template when read; "" without one
}

// get returns the domains in effect.
func (l *labelDomains) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.domains
}

// load reads the configuration as a controller starting now would, and
// remembers the pod template it belongs to.
func (l *labelDomains) load(ctx context.Context) error {
	var dep appsv1.Deployment
	err := l.reader.Get(ctx, types.NamespacedName{Namespace: l.namespace, Name: controllerDeploymentName}, &dep)
	template := ""
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		template = templateDigest(&dep)
	}
	var configured []string
	if err != nil || mountsSandboxConfig(&dep) {
		var cm corev1.ConfigMap
		err := l.reader.Get(ctx, types.NamespacedName{Namespace: l.namespace, Name: sandboxapi.ConfigMapName}, &cm)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		default:
			configured = sandboxapi.ParseAllowedLabelDomains(cm.Data[sandboxapi.ConfigKeyAllowedLabelDomains])
		}
	}
	domains := sandboxapi.EffectiveLabelDomains(configured)
	l.mu.Lock()
	l.domains, l.template = domains, template
	l.mu.Unlock()
	l.logger.Info("read the allowed label domains, as the controller does when it starts",
		"namespace", l.namespace, "configMap", sandboxapi.ConfigMapName, "domains", strings.Join(domains, ","))
	return nil
}

// Reconcile is called for the controller Deployment: a new pod template
// means a rollout, i.e. a controller that starts again and reads its
// configuration.
func (l *labelDomains) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var dep appsv1.Deployment
	err := l.reader.Get(ctx, types.NamespacedName{Namespace: l.namespace, Name: controllerDeploymentName}, &dep)
	if err != nil {
		// Deleted: the controller is gone, nothing restarts.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	l.mu.Lock()
	same := l.template == templateDigest(&dep)
	l.mu.Unlock()
	if same {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, l.load(ctx)
}

// setup watches the controller Deployment (that one object only).
func (l *labelDomains) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("sandboxsim-controller-config").
		For(&appsv1.Deployment{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == l.namespace && o.GetName() == controllerDeploymentName
		}))).
		Complete(l)
}

// templateDigest identifies a Deployment's pod template.
func templateDigest(dep *appsv1.Deployment) string {
	data, _ := json.Marshal(dep.Spec.Template) //nolint:errchkjson // a typed struct always encodes
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// mountsSandboxConfig says whether the Deployment mounts the ConfigMap where
// the controller reads it.
func mountsSandboxConfig(dep *appsv1.Deployment) bool {
	spec := dep.Spec.Template.Spec
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool {
		return v.ConfigMap != nil && v.ConfigMap.Name == sandboxapi.ConfigMapName
	})
	if i < 0 {
		return false
	}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == spec.Volumes[i].Name && strings.TrimRight(m.MountPath, "/") == sandboxapi.ConfigMountPath {
				return true
			}
		}
	}
	return false
}
