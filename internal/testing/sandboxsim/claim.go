package sandboxsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// Errors that end up as a claim's Ready reason.
var (
	errWarmPoolNotFound     = errors.New("SandboxWarmPool not found")
	errTemplateNotFound     = errors.New("SandboxTemplate not found")
	errAdoptionConflict     = errors.New("another claim adopted the sandbox first")
	errSandboxCreatePending = errors.New("sandbox already created; waiting for the cache to show it")
	errInvalidMetadata      = errors.New("invalid additionalPodMetadata")
	errEnvInjectionRejected = errors.New("environment variable injection rejected")
	errVolumeClaimTemplates = errors.New("volume claim templates rejected")
	errSandboxNotOwned      = errors.New("sandbox is not controlled by this claim")
)

// errClaimGone ends a pass whose claim was deleted under it.
var errClaimGone = errors.New("the claim no longer exists")

// claimErrorReasons maps errors to Ready reasons. Those that are not retried
// with backoff can only be fixed by a change to the claim, its pool or its
// template, and those changes are watched.
var claimErrorReasons = []struct {
	err    error
	reason string
	retry  bool
}{
	{errTemplateNotFound, extv1beta1.ReasonTemplateNotFound, false},
	{errWarmPoolNotFound, extv1beta1.ReasonWarmPoolNotFound, false},
	{errAdoptionConflict, extv1beta1.ReasonAdoptionConflict, true},
	{errSandboxCreatePending, extv1beta1.ReasonSandboxCreatePending, true},
	{errInvalidMetadata, extv1beta1.ReasonInvalidMetadata, false},
	{errEnvInjectionRejected, extv1beta1.ReasonEnvVarsInjectionRejected, false},
	{errVolumeClaimTemplates, extv1beta1.ReasonVolumeClaimTemplatesError, false},
	{errSandboxNotOwned, extv1beta1.ReasonClaimExpired, false},
}

const (
	// warmCandidateGrace is how long a new claim waits for a warm sandbox that
	// exists but has no pod IP yet, before cold-starting its own (upstream's
	// figure).
	warmCandidateGrace = 2 * time.Second
)

// warmPending asks for a short requeue while warm candidates get pod IPs.
type warmPending struct{ after time.Duration }

func (w *warmPending) Error() string { return "warm pool candidates are still waiting for pod IPs" }

// claimReconciler binds each SandboxClaim to one Sandbox: adopted from the
// claim's warm pool when one is ready, created from the pool's template
// otherwise.
type claimReconciler struct {
	client         client.Client
	reader         client.Reader
	scheme         *runtime.Scheme
	allowedDomains *labelDomains
	profile        releases.Profile
}

func (r *claimReconciler) setup(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("sandboxsim-sandboxclaim").
		For(&extv1beta1.SandboxClaim{}).
		Owns(&agentsv1beta1.Sandbox{}).
		// A pool sandbox that becomes ready may serve claims that are waiting.
		Watches(&agentsv1beta1.Sandbox{}, handler.EnqueueRequestsFromMapFunc(r.waitingClaimsForPoolSandbox)).
		// A pool appearing resolves WarmPoolNotFound; only its creation and
		// spec changes count, not its status
		// (extensions/controllers/sandboxclaim_controller.go:2377-2392 at v0.5.6).
		Watches(&extv1beta1.SandboxWarmPool{}, handler.EnqueueRequestsFromMapFunc(r.claimsForPool),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.profile.ClaimWatchesTemplates {
		// A template appearing resolves TemplateNotFound at once; upstream
		// added this watch after v0.5.6 (main b7631f00). Before, the claim
		// waits for its one-minute requeue.
		b = b.Watches(&extv1beta1.SandboxTemplate{}, handler.EnqueueRequestsFromMapFunc(r.claimsForTemplate))
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(ignoreNamespaceTermination(r))
}

// missingDependencyRequeue is how soon a claim whose pool or template is
// missing is looked at again: one minute in every v0.5.x release
// (sandboxclaim_controller.go:394 at v0.5.6, :285 at v0.5.0), which is then
// the only way a claim recovers from TemplateNotFound. With the template
// watch the requeue only covers a missed event.
func (r *claimReconciler) missingDependencyRequeue() time.Duration {
	if r.profile.ClaimWatchesTemplates {
		return 30 * time.Second
	}
	return time.Minute
}

func (r *claimReconciler) claimsOfPool(ctx context.Context, ns, pool string, unboundOnly bool) []reconcile.Request {
	var claims extv1beta1.SandboxClaimList
	if err := r.client.List(ctx, &claims, client.InNamespace(ns), client.MatchingFields{indexClaimWarmPool: pool}); err != nil {
		log.FromContext(ctx).Error(err, "listing claims of warm pool", "warmPool", pool)
		return nil
	}
	var reqs []reconcile.Request
	for _, c := range claims.Items {
		if unboundOnly && c.Status.Sandbox.Name != "" {
			continue
		}
		if unboundOnly && !r.profile.ClaimWatchesTemplates && waitsForTemplate(&c) {
			// Upstream's Sandbox watch only feeds its warm-sandbox queue
			// (sandboxEventHandler, sandboxclaim_controller.go:2627-2670 at
			// v0.5.6) and never reconciles a claim: one stuck on
			// TemplateNotFound waits for its one-minute requeue.
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
	}
	return reqs
}

// waitsForTemplate says whether the claim's Ready reason is TemplateNotFound.
func waitsForTemplate(c *extv1beta1.SandboxClaim) bool {
	cond := meta.FindStatusCondition(c.Status.Conditions, extv1beta1.ClaimConditionReady)
	return cond != nil && cond.Reason == extv1beta1.ReasonTemplateNotFound
}

func (r *claimReconciler) waitingClaimsForPoolSandbox(ctx context.Context, o client.Object) []reconcile.Request {
	ref := extensionsController(o, extv1beta1.SandboxWarmPoolKind)
	if ref == nil {
		return nil
	}
	return r.claimsOfPool(ctx, o.GetNamespace(), ref.Name, true)
}

func (r *claimReconciler) claimsForPool(ctx context.Context, o client.Object) []reconcile.Request {
	return r.claimsOfPool(ctx, o.GetNamespace(), o.GetName(), false)
}

func (r *claimReconciler) claimsForTemplate(ctx context.Context, o client.Object) []reconcile.Request {
	var pools extv1beta1.SandboxWarmPoolList
	if err := r.client.List(ctx, &pools, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexPoolTemplateRef: o.GetName()}); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, p := range pools.Items {
		reqs = append(reqs, r.claimsOfPool(ctx, p.Namespace, p.Name, false)...)
	}
	return reqs
}

func (r *claimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &extv1beta1.SandboxClaim{}
	if err := r.client.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := claim.Status.DeepCopy()

	expired, left := claimExpiry(claim, time.Now())
	if expired {
		if lc := claim.Spec.Lifecycle; lc.ShutdownPolicy == extv1beta1.ShutdownPolicyDelete || lc.ShutdownPolicy == extv1beta1.ShutdownPolicyDeleteForeground {
			log.FromContext(ctx).Info("claim expired; deleting it", "shutdownPolicy", lc.ShutdownPolicy)
			var opts []client.DeleteOption
			if lc.ShutdownPolicy == extv1beta1.ShutdownPolicyDeleteForeground {
				opts = append(opts, client.PropagationPolicy(metav1.DeletePropagationForeground))
			}
			return ctrl.Result{}, client.IgnoreNotFound(r.client.Delete(ctx, claim, opts...))
		}
	}

	var sb *agentsv1beta1.Sandbox
	var err error
	if expired {
		sb, err = r.expireSandbox(ctx, claim)
	} else {
		sb, err = r.reconcileActive(ctx, claim)
	}
	var pending *warmPending
	switch {
	case errors.As(err, &pending):
		return ctrl.Result{RequeueAfter: pending.after}, nil
	case errors.Is(err, errClaimGone):
		return ctrl.Result{}, nil
	}

	setClaimStatus(claim, sb, err, expired, r.profile)
	if !apiequality.Semantic.DeepEqual(before, &claim.Status) {
		base := claim.DeepCopy()
		base.Status = *before
		if perr := r.client.Status().Patch(ctx, claim, client.MergeFrom(base)); client.IgnoreNotFound(perr) != nil {
			return ctrl.Result{}, errors.Join(err, perr)
		}
	}

	result := ctrl.Result{}
	if !expired && left > 0 {
		result.RequeueAfter = left
	}
	switch {
	case err == nil:
		return result, nil
	case errors.Is(err, errWarmPoolNotFound), errors.Is(err, errTemplateNotFound):
		if d := r.missingDependencyRequeue(); result.RequeueAfter == 0 || result.RequeueAfter > d {
			result.RequeueAfter = d
		}
		return result, nil
	case errors.Is(err, errSandboxCreatePending):
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	for _, e := range claimErrorReasons {
		if errors.Is(err, e.err) && !e.retry {
			return result, nil
		}
	}
	return result, err
}

// claimExpiry reports whether the claim's lifecycle has run out and, if not,
// how long is left: the earlier of shutdownTime and ttlSecondsAfterFinished
// counted from when the Finished condition turned True.
func claimExpiry(claim *extv1beta1.SandboxClaim, now time.Time) (bool, time.Duration) {
	lc := claim.Spec.Lifecycle
	if lc == nil {
		return false, 0
	}
	var at *time.Time
	if lc.ShutdownTime != nil {
		t := lc.ShutdownTime.Time
		at = &t
	}
	if lc.TTLSecondsAfterFinished != nil {
		if fin := meta.FindStatusCondition(claim.Status.Conditions, extv1beta1.ClaimConditionFinished); fin != nil &&
			fin.Status == metav1.ConditionTrue && !fin.LastTransitionTime.IsZero() {
			t := fin.LastTransitionTime.Add(time.Duration(*lc.TTLSecondsAfterFinished) * time.Second)
			if at == nil || t.Before(*at) {
				at = &t
			}
		}
	}
	if at == nil {
		return false, 0
	}
	if !now.Before(*at) {
		return true, 0
	}
	return false, at.Sub(now) + 50*time.Millisecond
}

// expireSandbox applies the Retain policy: the claim stays, its sandbox goes.
func (r *claimReconciler) expireSandbox(ctx context.Context, claim *extv1beta1.SandboxClaim) (*agentsv1beta1.Sandbox, error) {
	name := claim.Status.Sandbox.Name
	if name == "" {
		name = claim.Name
	}
	sb := &agentsv1beta1.Sandbox{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: name}, sb); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(sb, claim) {
		return nil, fmt.Errorf("%w: sandbox %q; deletion skipped", errSandboxNotOwned, sb.Name)
	}
	if sb.DeletionTimestamp.IsZero() {
		log.FromContext(ctx).Info("claim expired; deleting its sandbox", "sandbox", sb.Name)
		if err := r.client.Delete(ctx, sb); client.IgnoreNotFound(err) != nil {
			return sb, err
		}
	}
	return sb, nil
}

func setClaimStatus(claim *extv1beta1.SandboxClaim, sb *agentsv1beta1.Sandbox, err error, expired bool, p releases.Profile) {
	ready, forwarded := claimReadyCondition(sb, err, expired)
	if !forwarded || !p.ClaimReadyForwardsSandboxCondition {
		// Every condition the claim controller makes itself carries the
		// claim's generation (sandboxclaim_controller.go:693-837 at v0.5.6);
		// the forwarded one does too only after upstream's post-v0.5.6 fix
		// (main 365a29c8).
		ready.ObservedGeneration = claim.Generation
	}
	meta.SetStatusCondition(&claim.Status.Conditions, ready)

	switch {
	case sb != nil:
		if fin := meta.FindStatusCondition(sb.Status.Conditions, agentsv1beta1.ConditionFinished.String()); fin != nil {
			meta.SetStatusCondition(&claim.Status.Conditions, *fin)
		} else {
			meta.RemoveStatusCondition(&claim.Status.Conditions, extv1beta1.ClaimConditionFinished)
		}
	case !expired:
		meta.RemoveStatusCondition(&claim.Status.Conditions, extv1beta1.ClaimConditionFinished)
	}

	switch {
	case sb != nil:
		claim.Status.Sandbox = extv1beta1.ClaimedSandboxStatus{Name: sb.Name, PodIPs: sb.Status.PodIPs}
	case err == nil || errors.Is(err, errSandboxNotOwned):
		claim.Status.Sandbox = extv1beta1.ClaimedSandboxStatus{}
	}
}

// claimReadyCondition is the claim's Ready condition; forwarded says it is
// the sandbox's own Ready condition, copied
// (sandboxclaim_controller.go:824-828 at v0.5.6).
func claimReadyCondition(sb *agentsv1beta1.Sandbox, err error, expired bool) (cond metav1.Condition, forwarded bool) {
	notReady := func(reason, msg string) metav1.Condition {
		return metav1.Condition{Type: extv1beta1.ClaimConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	}
	if err != nil {
		for _, e := range claimErrorReasons {
			if errors.Is(err, e.err) {
				return notReady(e.reason, err.Error()), false
			}
		}
		return notReady(extv1beta1.ReasonReconcilerError, "Error seen: "+err.Error()), false
	}
	if expired {
		return notReady(extv1beta1.ReasonClaimExpired, "Claim expired. Sandbox cleanup initiated."), false
	}
	if sb == nil {
		return notReady(extv1beta1.ReasonSandboxMissing, "Sandbox does not exist"), false
	}
	if c := meta.FindStatusCondition(sb.Status.Conditions, agentsv1beta1.ConditionReady.String()); c != nil {
		if c.Reason == agentsv1beta1.ReasonSandboxExpired {
			return notReady(extv1beta1.ReasonSandboxExpired, "The sandbox expired independently of the claim"), false
		}
		return *c, true
	}
	return notReady(extv1beta1.ReasonSandboxNotReady, "Sandbox is not ready"), false
}

func (r *claimReconciler) reconcileActive(ctx context.Context, claim *extv1beta1.SandboxClaim) (*agentsv1beta1.Sandbox, error) {
	if err := validateAdditionalPodMetadata(&claim.Spec.AdditionalPodMetadata, r.allowedDomains.get()); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidMetadata, err)
	}
	if sb, err := r.boundSandbox(ctx, claim); err != nil || sb != nil {
		if err == nil {
			err = r.syncBoundPodMetadata(ctx, claim, sb)
		}
		return sb, err
	}
	// Custom env or volumes cannot be applied to an already running pod, so
	// such claims always start cold.
	if len(claim.Spec.Env) == 0 && len(claim.Spec.VolumeClaimTemplates) == 0 {
		if sb, err := r.adoptWarm(ctx, claim); sb != nil || err != nil {
			return sb, err
		}
	}
	_, tmpl, err := r.poolAndTemplate(ctx, claim)
	if err != nil {
		return nil, err
	}
	return r.createSandbox(ctx, claim, tmpl)
}

// boundSandbox finds the sandbox the claim already has: the one in its status,
// the one named in its annotation (finishing an interrupted adoption), or a
// cold-started one named like the claim.
func (r *claimReconciler) boundSandbox(ctx context.Context, claim *extv1beta1.SandboxClaim) (*agentsv1beta1.Sandbox, error) {
	if name := claim.Status.Sandbox.Name; name != "" {
		sb := &agentsv1beta1.Sandbox{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: name}, sb)
		if err == nil && metav1.IsControlledBy(sb, claim) {
			return sb, nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	if name := claim.Annotations[sandboxapi.AnnotationSandboxName]; name != "" {
		sb, err := r.completeAdoption(ctx, claim, name)
		if err == nil {
			return sb, nil
		}
		if !errors.Is(err, errAdoptionConflict) && !apierrors.IsNotFound(err) {
			return nil, err
		}
		// The recorded sandbox is gone or went to someone else: forget it
		// and look again.
		if err := r.setClaimSandboxAnnotation(ctx, claim, name, ""); err != nil {
			return nil, err
		}
	}
	sb := &agentsv1beta1.Sandbox{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: claim.Name}, sb)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !metav1.IsControlledBy(sb, claim):
		return nil, fmt.Errorf("sandbox %q exists and is not controlled by this claim; use another claim name or delete the sandbox", sb.Name)
	}
	return sb, nil
}

func (r *claimReconciler) poolAndTemplate(ctx context.Context, claim *extv1beta1.SandboxClaim) (*extv1beta1.SandboxWarmPool, *extv1beta1.SandboxTemplate, error) {
	pool := &extv1beta1.SandboxWarmPool{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: claim.Spec.WarmPoolRef.Name}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("SandboxWarmPool %q not found: %w", claim.Spec.WarmPoolRef.Name, errWarmPoolNotFound)
		}
		return nil, nil, err
	}
	tmpl := &extv1beta1.SandboxTemplate{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: pool.Spec.TemplateRef.Name}, tmpl); err != nil {
		if apierrors.IsNotFound(err) {
			return pool, nil, fmt.Errorf("SandboxTemplate %q not found: %w", pool.Spec.TemplateRef.Name, errTemplateNotFound)
		}
		return pool, nil, err
	}
	return pool, tmpl, nil
}

// adoptWarm takes a sandbox from the claim's warm pool. Ready members are
// preferred, then members that have a pod IP; members still waiting for an IP
// are worth a short wait for a young claim. It returns nil, nil when the
// caller should cold-start instead.
func (r *claimReconciler) adoptWarm(ctx context.Context, claim *extv1beta1.SandboxClaim) (*agentsv1beta1.Sandbox, error) {
	pool, tmpl, err := r.poolAndTemplate(ctx, claim)
	if pool == nil {
		return nil, err
	}
	var members agentsv1beta1.SandboxList
	if err := r.reader.List(ctx, &members, client.InNamespace(claim.Namespace), client.MatchingLabels{sandboxapi.LabelWarmPoolSandbox: sandboxapi.NameHash(pool.Name)}); err != nil {
		return nil, fmt.Errorf("listing warm sandboxes: %w", err)
	}
	// Under Recreate a member built from an older template is about to be
	// replaced; handing it out would defeat the strategy.
	var currentHash string
	if tmpl != nil && pool.Spec.UpdateStrategy != nil && pool.Spec.UpdateStrategy.Type == extv1beta1.UpdateStrategyRecreate {
		if currentHash, err = blueprintHash(tmpl); err != nil {
			return nil, err
		}
	}
	var ready, withIP []*agentsv1beta1.Sandbox
	waiting := 0
	for i := range members.Items {
		sb := &members.Items[i]
		if adoptable(sb, claim) != nil || (currentHash != "" && sb.Labels[sandboxapi.LabelSandboxTemplateHash] != currentHash) {
			continue
		}
		switch {
		case len(sb.Status.PodIPs) == 0:
			waiting++
		case sandboxReady(sb):
			ready = append(ready, sb)
		default:
			withIP = append(withIP, sb)
		}
	}
	oldestFirst := func(a, b *agentsv1beta1.Sandbox) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	}
	slices.SortFunc(ready, oldestFirst)
	slices.SortFunc(withIP, oldestFirst)

	// A few attempts: concurrent claims may win the same candidates.
	for _, cand := range slices.Concat(ready, withIP)[:min(3, len(ready)+len(withIP))] {
		if err := r.setClaimSandboxAnnotation(ctx, claim, "", cand.Name); err != nil {
			return nil, err
		}
		sb, err := r.completeAdoption(ctx, claim, cand.Name)
		if err == nil {
			log.FromContext(ctx).Info("adopted warm sandbox", "sandbox", sb.Name, "warmPool", pool.Name)
			return sb, nil
		}
		if !errors.Is(err, errAdoptionConflict) && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err := r.setClaimSandboxAnnotation(ctx, claim, cand.Name, ""); err != nil {
			return nil, err
		}
	}
	if waiting > 0 && time.Since(claim.CreationTimestamp.Time) < warmCandidateGrace {
		return nil, &warmPending{after: 500 * time.Millisecond}
	}
	return nil, nil
}

// adoptable says why a sandbox cannot be handed to the claim, or nil.
func adoptable(sb *agentsv1beta1.Sandbox, claim *extv1beta1.SandboxClaim) error {
	switch {
	case sb.Namespace != claim.Namespace:
		return errors.New("sandbox is in another namespace")
	case !sb.DeletionTimestamp.IsZero():
		return errors.New("sandbox is being deleted")
	case sb.Labels[sandboxapi.LabelWarmPoolSandbox] == "" || sb.Labels[sandboxapi.LabelSandboxTemplateRefHash] == "":
		return errors.New("sandbox is not a warm pool member")
	}
	ref := extensionsController(sb, extv1beta1.SandboxWarmPoolKind)
	if ref == nil || ref.Name != claim.Spec.WarmPoolRef.Name {
		return errors.New("sandbox is not controlled by the claim's warm pool")
	}
	return nil
}

// setClaimSandboxAnnotation moves the claim's sandbox-name annotation from
// "from" to "to" ("" meaning absent). Recording the choice on the claim before
// touching the sandbox lets an interrupted adoption be finished, not repeated
// with a second sandbox.
func (r *claimReconciler) setClaimSandboxAnnotation(ctx context.Context, claim *extv1beta1.SandboxClaim, from, to string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := &extv1beta1.SandboxClaim{}
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(claim), fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return errClaimGone
			}
			return err
		}
		if fresh.UID != claim.UID {
			return fmt.Errorf("%w: the claim was replaced", errAdoptionConflict)
		}
		current := fresh.Annotations[sandboxapi.AnnotationSandboxName]
		if current == to {
			fresh.DeepCopyInto(claim)
			return nil
		}
		if current != from {
			return fmt.Errorf("%w: the claim already records sandbox %q", errAdoptionConflict, current)
		}
		if to == "" {
			delete(fresh.Annotations, sandboxapi.AnnotationSandboxName)
		} else {
			fresh.Annotations = mergeMaps(fresh.Annotations, map[string]string{sandboxapi.AnnotationSandboxName: to})
		}
		if to != "" && r.profile.AdoptionUpdateWritesEmptyPodMetadata {
			// Upstream records an adoption with a full Update of its typed
			// claim, whose additionalPodMetadata is a struct tagged
			// omitempty: the claim gains `additionalPodMetadata: {}`
			// (sandboxclaim_controller.go:1142 and sandboxclaim_types.go:122
			// at v0.5.6). Our type omits the zero struct, so write it as
			// data.
			if err := r.updateWithEmptyPodMetadata(ctx, fresh); err != nil {
				return err
			}
			fresh.DeepCopyInto(claim)
			return nil
		}
		if err := r.client.Update(ctx, fresh); err != nil {
			return err
		}
		fresh.DeepCopyInto(claim)
		return nil
	})
}

// updateWithEmptyPodMetadata updates claim as upstream's typed Update does,
// with spec.additionalPodMetadata present even when empty, and reads the
// result back into claim.
func (r *claimReconciler) updateWithEmptyPodMetadata(ctx context.Context, claim *extv1beta1.SandboxClaim) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(claim)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxClaimKind))
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "additionalPodMetadata"); !found {
		if err := unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", "additionalPodMetadata"); err != nil {
			return err
		}
	}
	if err := r.client.Update(ctx, u); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, claim)
}

// completeAdoption makes the named warm sandbox the claim's. The sandbox is
// read from the API server and patched with its resourceVersion as
// precondition, so of two claims racing for it exactly one wins; the loser
// sees errAdoptionConflict.
func (r *claimReconciler) completeAdoption(ctx context.Context, claim *extv1beta1.SandboxClaim, name string) (*agentsv1beta1.Sandbox, error) {
	var tmpl *extv1beta1.SandboxTemplate
	if _, t, err := r.poolAndTemplate(ctx, claim); err == nil {
		tmpl = t
	}
	var out *agentsv1beta1.Sandbox
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sb := &agentsv1beta1.Sandbox{}
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: name}, sb); err != nil {
			return err
		}
		if metav1.IsControlledBy(sb, claim) {
			out = sb
			return nil
		}
		if why := adoptable(sb, claim); why != nil {
			return fmt.Errorf("%w: %s: %w", errAdoptionConflict, name, why)
		}
		base := sb.DeepCopy()

		// The sandbox leaves the pool: the pool stops counting it and its pod
		// loses the warm-pool label on the next Sandbox pass.
		delete(sb.Labels, sandboxapi.LabelWarmPoolSandbox)
		delete(sb.Labels, sandboxapi.LabelSandboxTemplateHash)
		delete(sb.Labels, sandboxapi.LabelSandboxPodTemplateHash)
		sb.Labels[sandboxapi.LabelLaunchType] = sandboxapi.LaunchTypeWarm
		sb.Labels[sandboxapi.LabelClaimUID] = string(claim.UID)
		refHash := sb.Labels[sandboxapi.LabelSandboxTemplateRefHash]

		// Start from the template's own pod metadata, which drops the
		// pool-only keys (and the autoscaler's eviction permission).
		from := sb.Spec.PodTemplate.Metadata.DeepCopy()
		if tmpl != nil {
			from = tmpl.Spec.PodTemplate.Metadata.DeepCopy()
		} else {
			delete(from.Labels, sandboxapi.LabelWarmPoolSandbox)
			delete(from.Labels, sandboxapi.LabelSandboxTemplateHash)
			if from.Annotations[sandboxapi.AnnotationSafeToEvict] == "true" {
				delete(from.Annotations, sandboxapi.AnnotationSafeToEvict)
			}
		}
		pm, err := claimPodMetadata(from, claim, refHash)
		if err != nil {
			return err
		}
		sb.Spec.PodTemplate.Metadata = pm

		sb.OwnerReferences = nil
		if err := controllerutil.SetControllerReference(claim, sb, r.scheme); err != nil {
			return err
		}
		sb.Annotations = mergeMaps(sb.Annotations, map[string]string{sandboxapi.AnnotationPodName: sb.Name})
		if err := r.client.Patch(ctx, sb, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		out = sb
		return nil
	})
	if apierrors.IsConflict(err) {
		err = fmt.Errorf("%w: %w", errAdoptionConflict, err)
	}
	return out, err
}

// createSandbox cold-starts the claim's own sandbox, named like the claim.
func (r *claimReconciler) createSandbox(ctx context.Context, claim *extv1beta1.SandboxClaim, tmpl *extv1beta1.SandboxTemplate) (*agentsv1beta1.Sandbox, error) {
	refHash := sandboxapi.NameHash(tmpl.Name)
	sb := &agentsv1beta1.Sandbox{
		ObjectMeta: metav1.ObjectMeta{
			Name:      claim.Name,
			Namespace: claim.Namespace,
			Labels: withManagedBy(map[string]string{
				sandboxapi.LabelClaimUID:               string(claim.UID),
				sandboxapi.LabelLaunchType:             sandboxapi.LaunchTypeCold,
				sandboxapi.LabelSandboxTemplateRefHash: refHash,
			}),
			Annotations: map[string]string{sandboxapi.AnnotationSandboxTemplateRef: tmpl.Name},
		},
		Spec: agentsv1beta1.SandboxSpec{SandboxBlueprint: *tmpl.Spec.SandboxBlueprint.DeepCopy()},
	}
	vcts, err := mergeVolumeClaimTemplates(tmpl.Spec.VolumeClaimTemplates, claim.Spec.VolumeClaimTemplates, tmpl.Spec.VolumeClaimTemplatesPolicy)
	if err != nil {
		return nil, err
	}
	sb.Spec.VolumeClaimTemplates = vcts

	pt := &sb.Spec.PodTemplate
	if pt.Metadata, err = claimPodMetadata(&tmpl.Spec.PodTemplate.Metadata, claim, refHash); err != nil {
		return nil, err
	}
	if err := injectEnv(&pt.Spec, claim.Spec.Env, tmpl.Spec.EnvVarsInjectionPolicy); err != nil {
		return nil, err
	}
	applySecureDefaults(tmpl, &pt.Spec)
	if err := controllerutil.SetControllerReference(claim, sb, r.scheme); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, sb, client.FieldOwner(fieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, errSandboxCreatePending
		}
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	log.FromContext(ctx).Info("cold-started sandbox for claim", "sandbox", sb.Name)
	return sb, nil
}

// claimPodMetadata is the pod metadata of a claim's sandbox: base (normally
// the template's), the claim's identity labels, and its additionalPodMetadata.
func claimPodMetadata(base *agentsv1beta1.PodMetadata, claim *extv1beta1.SandboxClaim, refHash string) (agentsv1beta1.PodMetadata, error) {
	pm := *base.DeepCopy()
	pm.Labels = mergeMaps(pm.Labels, map[string]string{sandboxapi.LabelClaimUID: string(claim.UID), sandboxapi.LabelSandboxTemplateRefHash: refHash})
	err := mergePodMetadata(&pm, &claim.Spec.AdditionalPodMetadata)
	return pm, err
}

// syncBoundPodMetadata keeps a bound sandbox's pod metadata in line with the
// claim as it is now, so that an edit of additionalPodMetadata (or of the
// template's pod metadata) reaches the running pod, as upstream does.
func (r *claimReconciler) syncBoundPodMetadata(ctx context.Context, claim *extv1beta1.SandboxClaim, sb *agentsv1beta1.Sandbox) error {
	_, tmpl, err := r.poolAndTemplate(ctx, claim)
	if err != nil {
		// Without the template the wanted metadata is unknown. That only
		// matters when the claim asks for metadata of its own.
		if len(claim.Spec.AdditionalPodMetadata.Labels)+len(claim.Spec.AdditionalPodMetadata.Annotations) > 0 {
			return fmt.Errorf("cannot apply additionalPodMetadata: %w", err)
		}
		return nil
	}
	refHash := sb.Labels[sandboxapi.LabelSandboxTemplateRefHash]
	if refHash == "" {
		refHash = sandboxapi.NameHash(tmpl.Name)
	}
	want, err := claimPodMetadata(&tmpl.Spec.PodTemplate.Metadata, claim, refHash)
	if err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(want, sb.Spec.PodTemplate.Metadata) {
		return nil
	}
	patch := client.MergeFrom(sb.DeepCopy())
	sb.Spec.PodTemplate.Metadata = want
	if err := r.client.Patch(ctx, sb, patch); err != nil {
		return fmt.Errorf("updating the sandbox's pod metadata: %w", err)
	}
	return nil
}

// restrictedAnnotationDomains may not be set through additionalPodMetadata.
var restrictedAnnotationDomains = []string{"kubernetes.io", "k8s.io", "agents.x-k8s.io"}

func inDomain(domain string, domains []string) bool {
	return slices.ContainsFunc(domains, func(d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) })
}

// validateAdditionalPodMetadata applies upstream's documented rules: label
// keys need a prefix from the allowed domains (so a claim cannot opt its pod
// into someone's NetworkPolicy), the router's app=sandbox-router identity is
// off limits, and annotations may not use Kubernetes' or the controller's
// domains (the autoscaler's safe-to-evict excepted).
func validateAdditionalPodMetadata(md *agentsv1beta1.PodMetadata, allowed []string) error {
	for k, v := range md.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if strings.EqualFold(k, "app") && strings.EqualFold(v, "sandbox-router") {
			return fmt.Errorf("label %s=%s is reserved for the sandbox router", k, v)
		}
		prefix, _, hasPrefix := strings.Cut(k, "/")
		if !hasPrefix {
			return fmt.Errorf("label %q needs a domain prefix such as %s/", k, allowed[0])
		}
		if !sandboxapi.LabelDomainAllowed(prefix, allowed) {
			return fmt.Errorf("label domain %q is not in the allowed list %v", prefix, allowed)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %q value %q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	for k := range md.Annotations {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("annotation key %q: %s", k, strings.Join(errs, "; "))
		}
		if prefix, _, ok := strings.Cut(k, "/"); ok && inDomain(strings.ToLower(prefix), restrictedAnnotationDomains) && k != sandboxapi.AnnotationSafeToEvict {
			return fmt.Errorf("annotation %q uses a restricted domain", k)
		}
	}
	return nil
}

// mergePodMetadata adds the claim's pod metadata to the template's; a claim
// may add keys but not change the template's values.
func mergePodMetadata(dst, add *agentsv1beta1.PodMetadata) error {
	for k, v := range add.Labels {
		if cur, ok := dst.Labels[k]; ok && cur != v {
			return fmt.Errorf("%w: label %q is %q in the template; the claim cannot change it to %q", errInvalidMetadata, k, cur, v)
		}
	}
	for k, v := range add.Annotations {
		if cur, ok := dst.Annotations[k]; ok && cur != v {
			return fmt.Errorf("%w: annotation %q is %q in the template; the claim cannot change it to %q", errInvalidMetadata, k, cur, v)
		}
	}
	if len(add.Labels) > 0 {
		dst.Labels = mergeMaps(dst.Labels, add.Labels)
	}
	if len(add.Annotations) > 0 {
		dst.Annotations = mergeMaps(dst.Annotations, add.Annotations)
	}
	return nil
}

// injectEnv adds the claim's variables under the template's policy: entries
// naming a container go there, the rest to the first container; replacing a
// variable the template defines needs the Overrides policy.
func injectEnv(spec *corev1.PodSpec, env []extv1beta1.EnvVar, policy extv1beta1.EnvVarsInjectionPolicy) error {
	if len(env) == 0 {
		return nil
	}
	if policy != extv1beta1.EnvVarsAllowed && policy != extv1beta1.EnvVarsOverrides {
		return fmt.Errorf("%w: the template's envVarsInjectionPolicy is %q", errEnvInjectionRejected, policyOrDefault(policy))
	}
	containers := map[string]*corev1.Container{}
	for i := range spec.InitContainers {
		containers[spec.InitContainers[i].Name] = &spec.InitContainers[i]
	}
	for i := range spec.Containers {
		containers[spec.Containers[i].Name] = &spec.Containers[i]
	}
	for _, e := range env {
		var c *corev1.Container
		switch {
		case e.ContainerName != "":
			c = containers[e.ContainerName]
			if c == nil {
				return fmt.Errorf("%w: container %q (for %s) is not in the template", errEnvInjectionRejected, e.ContainerName, e.Name)
			}
		case len(spec.Containers) > 0:
			c = &spec.Containers[0]
		default:
			return fmt.Errorf("%w: the template has no container", errEnvInjectionRejected)
		}
		if policy == extv1beta1.EnvVarsAllowed && len(c.EnvFrom) > 0 {
			// envFrom contents are unknown here, so an override cannot be ruled out.
			return fmt.Errorf("%w: container %q uses envFrom, which the Allowed policy cannot protect", errEnvInjectionRejected, c.Name)
		}
		idx := slices.IndexFunc(c.Env, func(v corev1.EnvVar) bool { return v.Name == e.Name })
		switch {
		case idx < 0:
			c.Env = append(c.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
		case policy == extv1beta1.EnvVarsOverrides:
			c.Env[idx] = corev1.EnvVar{Name: e.Name, Value: e.Value}
		default:
			return fmt.Errorf("%w: %s is set by the template and the policy is Allowed, not Overrides", errEnvInjectionRejected, e.Name)
		}
	}
	return nil
}

func policyOrDefault[T ~string](p T) T {
	if p == "" {
		return "Disallowed"
	}
	return p
}

// mergeVolumeClaimTemplates resolves the sandbox's claim templates under the
// template's volumeClaimTemplatesPolicy.
func mergeVolumeClaimTemplates(fromTemplate, fromClaim []agentsv1beta1.PersistentVolumeClaimTemplate, policy extv1beta1.VolumeClaimTemplatesPolicy) ([]agentsv1beta1.PersistentVolumeClaimTemplate, error) {
	for _, list := range [][]agentsv1beta1.PersistentVolumeClaimTemplate{fromTemplate, fromClaim} {
		seen := map[string]bool{}
		for _, t := range list {
			if t.Metadata.Name == "" || seen[t.Metadata.Name] {
				return nil, fmt.Errorf("%w: names must be non-empty and unique", errVolumeClaimTemplates)
			}
			seen[t.Metadata.Name] = true
		}
	}
	if len(fromClaim) == 0 {
		return fromTemplate, nil
	}
	byName := func(list []agentsv1beta1.PersistentVolumeClaimTemplate, name string) int {
		return slices.IndexFunc(list, func(t agentsv1beta1.PersistentVolumeClaimTemplate) bool { return t.Metadata.Name == name })
	}
	out := slices.Clone(fromTemplate)
	switch policy {
	case extv1beta1.VolumeClaimTemplatesAllowed, extv1beta1.VolumeClaimTemplatesOverrides:
		for _, t := range fromClaim {
			i := byName(out, t.Metadata.Name)
			switch {
			case i < 0:
				out = append(out, t)
			case policy == extv1beta1.VolumeClaimTemplatesOverrides:
				out[i] = t
			default:
				return nil, fmt.Errorf("%w: %q is defined by the template and the policy is Allowed, not Overrides", errVolumeClaimTemplates, t.Metadata.Name)
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: the template's volumeClaimTemplatesPolicy is %q", errVolumeClaimTemplates, policyOrDefault(policy))
	}
}
