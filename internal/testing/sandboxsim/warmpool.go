package sandboxsim

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// Field indexes shared by the extension controllers.
const (
	indexPoolTemplateRef = "sandboxsim.spec.sandboxTemplateRef.name"
	indexClaimWarmPool   = "sandboxsim.spec.warmPoolRef.name"
)

func setupIndexes(mgr ctrl.Manager) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &extv1beta1.SandboxWarmPool{}, indexPoolTemplateRef, func(o client.Object) []string {
		if p, ok := o.(*extv1beta1.SandboxWarmPool); ok {
			return []string{p.Spec.TemplateRef.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	return mgr.GetFieldIndexer().IndexField(ctx, &extv1beta1.SandboxClaim{}, indexClaimWarmPool, func(o client.Object) []string {
		if c, ok := o.(*extv1beta1.SandboxClaim); ok {
			return []string{c.Spec.WarmPoolRef.Name}
		}
		return nil
	})
}

// warmPoolReconciler keeps spec.replicas Sandboxes pre-created from a template.
//
// Pool members are listed through reader, which goes to the API server rather
// than the informer cache. A cache that has not yet seen this controller's own
// creates would make it create again; upstream guards against that with an
// expectations tracker, while a direct list costs one request per pass and
// cannot be stale.
type warmPoolReconciler struct {
	client  client.Client
	reader  client.Reader
	scheme  *runtime.Scheme
	profile releases.Profile
}

func (r *warmPoolReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("sandboxsim-sandboxwarmpool").
		For(&extv1beta1.SandboxWarmPool{}).
		// Update events enqueue both the old and the new controller, so a
		// sandbox adopted by a claim brings its former pool back to replenish.
		Owns(&agentsv1beta1.Sandbox{}).
		Watches(&extv1beta1.SandboxTemplate{}, handler.EnqueueRequestsFromMapFunc(r.poolsForTemplate)).
		Complete(ignoreNamespaceTermination(r))
}

func (r *warmPoolReconciler) poolsForTemplate(ctx context.Context, o client.Object) []reconcile.Request {
	var pools extv1beta1.SandboxWarmPoolList
	if err := r.client.List(ctx, &pools, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexPoolTemplateRef: o.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing warm pools of template", "template", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(pools.Items))
	for _, p := range pools.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return reqs
}

func (r *warmPoolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pool := &extv1beta1.SandboxWarmPool{}
	if err := r.client.Get(ctx, req.NamespacedName, pool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	logger := log.FromContext(ctx)
	before := pool.Status.DeepCopy()
	poolHash := sandboxapi.NameHash(pool.Name)

	var members agentsv1beta1.SandboxList
	if err := r.reader.List(ctx, &members, client.InNamespace(pool.Namespace), client.MatchingLabels{sandboxapi.LabelWarmPoolSandbox: poolHash}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pool sandboxes: %w", err)
	}

	// A missing template stops creation but not the status report: the pool
	// still says how many sandboxes it has.
	tmpl := &extv1beta1.SandboxTemplate{}
	var tmplHash string
	tmplErr := r.client.Get(ctx, types.NamespacedName{Namespace: pool.Namespace, Name: pool.Spec.TemplateRef.Name}, tmpl)
	if tmplErr == nil {
		var err error
		if tmplHash, err = blueprintHash(tmpl); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		tmpl = nil
	}
	recreate := pool.Spec.UpdateStrategy != nil && pool.Spec.UpdateStrategy.Type == extv1beta1.UpdateStrategyRecreate

	var errs error
	var active []*agentsv1beta1.Sandbox
	terminating := 0
	for i := range members.Items {
		sb := &members.Items[i]
		own := ownershipOf(sb, pool.UID)
		if own == ownedByOther {
			continue // adopted by a claim mid-flight, or someone else's
		}
		if !sb.DeletionTimestamp.IsZero() {
			if own == ownedByUs {
				terminating++ // still occupies capacity until it is gone
			}
			continue
		}
		// Stale members go under Recreate; orphans that carry our label are
		// only taken over when they match the current template.
		if tmpl != nil && (recreate || own == unowned) && isStale(sb, tmpl, tmplHash) {
			logger.Info("deleting stale pool sandbox", "sandbox", sb.Name)
			if err := r.client.Delete(ctx, sb); client.IgnoreNotFound(err) != nil {
				errs = errors.Join(errs, err)
			} else if own == ownedByUs {
				terminating++
			}
			continue
		}
		if own == unowned {
			if err := controllerutil.SetControllerReference(pool, sb, r.scheme); err != nil {
				errs = errors.Join(errs, err)
				continue
			}
			sb.Labels[sandboxapi.LabelLaunchType] = sandboxapi.LaunchTypeWarm
			if err := r.client.Update(ctx, sb); err != nil {
				errs = errors.Join(errs, fmt.Errorf("adopting orphan sandbox %s: %w", sb.Name, err))
				continue
			}
		}
		active = append(active, sb)
	}

	desired := int32(1)
	if pool.Spec.Replicas != nil {
		desired = *pool.Spec.Replicas
	}

	// Creates are gated on everything still present, terminating members
	// included, so the population never overshoots spec.replicas.
	if missing := int(desired) - len(active) - terminating; missing > 0 && tmpl != nil {
		for range missing {
			sb, err := r.createMember(ctx, pool, tmpl, tmplHash)
			if err != nil {
				errs = errors.Join(errs, err)
				break
			}
			active = append(active, sb)
		}
	}
	if excess := len(active) - int(desired); excess > 0 {
		// Give up the least useful first: not yet ready, then the youngest.
		slices.SortFunc(active, func(a, b *agentsv1beta1.Sandbox) int {
			if ra, rb := sandboxReady(a), sandboxReady(b); ra != rb {
				if ra {
					return 1
				}
				return -1
			}
			return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
		})
		for _, sb := range active[:excess] {
			logger.Info("scaling down pool", "sandbox", sb.Name)
			if err := r.client.Delete(ctx, sb); client.IgnoreNotFound(err) != nil {
				errs = errors.Join(errs, err)
			}
		}
		active = active[excess:]
	}

	ready := int32(0)
	for _, sb := range active {
		if sandboxReady(sb) {
			ready++
		}
	}
	pool.Status.Replicas = int32(len(active))
	pool.Status.ReadyReplicas = ready
	pool.Status.Selector = sandboxapi.WarmPoolSelector(pool.Name)
	if r.profile.WarmPoolObservedGeneration {
		// From v0.5.6 only (extensions/controllers/sandboxwarmpool_controller.go
		// sets it with the status at v0.5.6; the v0.5.5 status has no such field).
		pool.Status.ObservedGeneration = pool.Generation
	}
	if !apiequality.Semantic.DeepEqual(before, &pool.Status) {
		base := pool.DeepCopy()
		base.Status = *before
		errs = errors.Join(errs, client.IgnoreNotFound(r.client.Status().Patch(ctx, pool, client.MergeFrom(base))))
	}
	if errs == nil && tmplErr != nil && !apierrors.IsNotFound(tmplErr) {
		errs = tmplErr
	}
	return ctrl.Result{}, errs
}

// isStale reports whether a pool sandbox was built from another template or
// another version of this one. The blueprint hash label is the record; a
// member without it cannot be proven current.
func isStale(sb *agentsv1beta1.Sandbox, tmpl *extv1beta1.SandboxTemplate, tmplHash string) bool {
	return sb.Labels[sandboxapi.LabelSandboxTemplateRefHash] != sandboxapi.NameHash(tmpl.Name) || sb.Labels[sandboxapi.LabelSandboxTemplateHash] != tmplHash
}

func (r *warmPoolReconciler) createMember(ctx context.Context, pool *extv1beta1.SandboxWarmPool, tmpl *extv1beta1.SandboxTemplate, tmplHash string) (*agentsv1beta1.Sandbox, error) {
	poolHash, refHash := sandboxapi.NameHash(pool.Name), sandboxapi.NameHash(tmpl.Name)
	sb := &agentsv1beta1.Sandbox{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: pool.Name + "-",
			Namespace:    pool.Namespace,
			Labels: withManagedBy(map[string]string{
				sandboxapi.LabelWarmPoolSandbox:        poolHash,
				sandboxapi.LabelSandboxTemplateRefHash: refHash,
				sandboxapi.LabelSandboxTemplateHash:    tmplHash,
				sandboxapi.LabelLaunchType:             sandboxapi.LaunchTypeWarm,
			}),
			Annotations: map[string]string{sandboxapi.AnnotationSandboxTemplateRef: tmpl.Name},
		},
		Spec: agentsv1beta1.SandboxSpec{SandboxBlueprint: *tmpl.Spec.SandboxBlueprint.DeepCopy()},
	}
	pt := &sb.Spec.PodTemplate
	pt.Metadata.Labels = mergeMaps(pt.Metadata.Labels, map[string]string{
		sandboxapi.LabelWarmPoolSandbox:        poolHash,
		sandboxapi.LabelSandboxTemplateRefHash: refHash,
		sandboxapi.LabelSandboxTemplateHash:    tmplHash,
	})
	// Idle warm pods may be evicted by the cluster autoscaler (upstream's
	// default); adoption removes the marker again.
	if _, set := pt.Metadata.Annotations[sandboxapi.AnnotationSafeToEvict]; !set {
		pt.Metadata.Annotations = mergeMaps(pt.Metadata.Annotations, map[string]string{sandboxapi.AnnotationSafeToEvict: "true"})
	}
	applySecureDefaults(tmpl, &pt.Spec)
	if err := controllerutil.SetControllerReference(pool, sb, r.scheme); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, sb, client.FieldOwner(fieldOwner)); err != nil {
		return nil, fmt.Errorf("creating pool sandbox: %w", err)
	}
	log.FromContext(ctx).Info("created pool sandbox", "sandbox", sb.Name)
	return sb, nil
}
