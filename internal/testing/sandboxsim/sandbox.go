package sandboxsim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// sandboxReconciler turns a Sandbox into its Pod, PVCs and optional headless
// Service, and reports their state in the Sandbox status.
type sandboxReconciler struct {
	client        client.Client
	scheme        *runtime.Scheme
	clusterDomain string
}

func (r *sandboxReconciler) setup(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("sandboxsim-sandbox").
		For(&agentsv1beta1.Sandbox{}).
		Owns(&corev1.Pod{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(ignoreNamespaceTermination(r))
}

// errMultiplePods is the one pod-mapping error that gets its own Ready reason.
var errMultiplePods = errors.New("more than one pod is controlled by this sandbox; refusing to pick one")

func (r *sandboxReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sb := &agentsv1beta1.Sandbox{}
	if err := r.client.Get(ctx, req.NamespacedName, sb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// No finalizers: the garbage collector removes the children of a deleted
	// Sandbox, exactly as upstream relies on.
	if !sb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := sb.Status.DeepCopy()

	remaining, expired := timeToShutdown(sb, time.Now())
	if expired {
		deleted, err := r.expire(ctx, sb)
		if deleted || err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.patchStatus(ctx, sb, before)
	}

	err := errors.Join(r.reconcileChildren(ctx, sb), r.patchStatus(ctx, sb, before))
	// Wake up just after the shutdown time, whatever happens in between.
	return ctrl.Result{RequeueAfter: remaining}, err
}

// timeToShutdown returns how long until the sandbox expires (0 without a
// shutdownTime) and whether it already has.
func timeToShutdown(sb *agentsv1beta1.Sandbox, now time.Time) (time.Duration, bool) {
	if sb.Spec.ShutdownTime == nil {
		return 0, false
	}
	left := sb.Spec.ShutdownTime.Sub(now)
	if left <= 0 {
		return 0, true
	}
	return left + 50*time.Millisecond, false
}

// expire tears down the pod and Service of an expired sandbox and applies its
// shutdown policy. It reports whether the Sandbox itself was deleted.
func (r *sandboxReconciler) expire(ctx context.Context, sb *agentsv1beta1.Sandbox) (bool, error) {
	var errs error
	pod := &corev1.Pod{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: sb.Namespace, Name: podNameFor(sb)}, pod); err == nil {
		if ownershipOf(pod, sb.UID) == ownedByUs && pod.DeletionTimestamp.IsZero() {
			errs = errors.Join(errs, client.IgnoreNotFound(r.client.Delete(ctx, pod)))
		}
	} else if !apierrors.IsNotFound(err) {
		errs = errors.Join(errs, err)
	}
	svc := &corev1.Service{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(sb), svc); err == nil {
		if ownershipOf(svc, sb.UID) == ownedByUs && svc.DeletionTimestamp.IsZero() {
			errs = errors.Join(errs, client.IgnoreNotFound(r.client.Delete(ctx, svc)))
		}
	} else if !apierrors.IsNotFound(err) {
		errs = errors.Join(errs, err)
	}
	if errs != nil {
		return false, errs
	}

	if sb.Spec.ShutdownPolicy != nil && *sb.Spec.ShutdownPolicy == agentsv1beta1.ShutdownPolicyDelete {
		log.FromContext(ctx).Info("sandbox expired; deleting it (shutdownPolicy Delete)")
		return true, client.IgnoreNotFound(r.client.Delete(ctx, sb))
	}

	// Retain: the object stays as a record. Live fields go, conditions stay,
	// and Ready says why nothing runs any more. PodScheduled describes a pod
	// that no longer exists, so it goes too.
	sb.Status = agentsv1beta1.SandboxStatus{Conditions: sb.Status.Conditions}
	meta.SetStatusCondition(&sb.Status.Conditions, metav1.Condition{
		Type:               agentsv1beta1.ConditionReady.String(),
		Status:             metav1.ConditionFalse,
		Reason:             agentsv1beta1.ReasonSandboxExpired,
		Message:            "Sandbox has expired",
		ObservedGeneration: sb.Generation,
	})
	meta.RemoveStatusCondition(&sb.Status.Conditions, agentsv1beta1.ConditionPodScheduled.String())
	return false, nil
}

// reconcileChildren converges PVCs, Pod and Service and fills in the status.
// It returns the first error worth retrying, after the status reflects it.
func (r *sandboxReconciler) reconcileChildren(ctx context.Context, sb *agentsv1beta1.Sandbox) error {
	hash := sandboxapi.NameHash(sb.Name)

	pvcErr := r.reconcilePVCs(ctx, sb, hash)
	pod, podErr := r.reconcilePod(ctx, sb, hash)

	var svc *corev1.Service
	var svcErr error
	if !errors.Is(podErr, errMultiplePods) {
		// While the pod mapping is ambiguous, leave routing alone for a human
		// to look at.
		svc, svcErr = r.reconcileService(ctx, sb, hash)
	}

	owned := pod != nil && ownershipOf(pod, sb.UID) == ownedByUs
	if pod != nil {
		sb.Status.Selector = sandboxapi.LabelSandboxNameHash + "=" + hash
	}
	if owned {
		sb.Status.PodIPs = podIPs(pod)
		sb.Status.NodeName = pod.Spec.NodeName
	} else {
		sb.Status.PodIPs = nil
		sb.Status.NodeName = ""
	}

	errs := errors.Join(pvcErr, podErr, svcErr)
	gen := sb.Generation
	set := func(c metav1.Condition) {
		c.ObservedGeneration = gen
		meta.SetStatusCondition(&sb.Status.Conditions, c)
	}

	set(suspendedCondition(sb, pod, podErr))

	// Finished and PodScheduled exist only while they describe a pod of ours.
	if c := finishedCondition(pod, owned); c != nil {
		set(*c)
	} else {
		meta.RemoveStatusCondition(&sb.Status.Conditions, agentsv1beta1.ConditionFinished.String())
	}
	if c := podScheduledCondition(pod, owned, podErr); c != nil {
		set(*c)
	} else {
		meta.RemoveStatusCondition(&sb.Status.Conditions, agentsv1beta1.ConditionPodScheduled.String())
	}

	set(readyCondition(sb, pod, svc, errs))

	if errors.Is(podErr, errMultiplePods) {
		// A stable state rather than a transient failure: the condition says
		// so, and a pod event (not a hot retry loop) will bring us back.
		podErr = nil
	}
	return errors.Join(pvcErr, podErr, svcErr)
}

func podIPs(pod *corev1.Pod) []string {
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	return ips
}

func suspendedCondition(sb *agentsv1beta1.Sandbox, pod *corev1.Pod, podErr error) metav1.Condition {
	c := metav1.Condition{
		Type:    agentsv1beta1.ConditionSuspended.String(),
		Status:  metav1.ConditionFalse,
		Reason:  agentsv1beta1.ReasonNotSuspended,
		Message: "Sandbox is not suspended",
	}
	if sb.Spec.OperatingMode != agentsv1beta1.OperatingModeSuspended {
		return c
	}
	switch {
	case pod == nil && podErr != nil:
		c.Status, c.Reason = metav1.ConditionUnknown, agentsv1beta1.ReasonPodStateUnknown
		c.Message = "The pod could not be read, so suspension cannot be confirmed"
	case pod == nil:
		c.Status, c.Reason = metav1.ConditionTrue, agentsv1beta1.ReasonPodTerminated
		c.Message = "The pod is gone; the sandbox is suspended"
	case ownershipOf(pod, sb.UID) != ownedByUs:
		c.Reason = agentsv1beta1.ReasonPodNotOwned
		c.Message = "A pod with the sandbox's name exists but is not controlled by it, so it was not deleted"
	default:
		c.Reason = agentsv1beta1.ReasonPodTerminating
		c.Message = "The pod is terminating; the sandbox is suspending"
	}
	return c
}

func finishedCondition(pod *corev1.Pod, owned bool) *metav1.Condition {
	if !owned {
		return nil
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return &metav1.Condition{Type: agentsv1beta1.ConditionFinished.String(), Status: metav1.ConditionTrue,
			Reason: agentsv1beta1.ReasonPodSucceeded, Message: "The pod completed successfully"}
	case corev1.PodFailed:
		return &metav1.Condition{Type: agentsv1beta1.ConditionFinished.String(), Status: metav1.ConditionTrue,
			Reason: agentsv1beta1.ReasonPodFailed, Message: "The pod failed"}
	}
	return nil
}

// podScheduledCondition copies the pod's PodScheduled condition verbatim, so
// a scheduler reason such as Unschedulable reaches users who cannot read pods.
func podScheduledCondition(pod *corev1.Pod, owned bool, podErr error) *metav1.Condition {
	c := &metav1.Condition{Type: agentsv1beta1.ConditionPodScheduled.String()}
	if pod == nil && podErr != nil {
		// A failed read does not prove the pod is gone.
		c.Status, c.Reason = metav1.ConditionUnknown, agentsv1beta1.ReasonPodSchedulingUnknown
		c.Message = "The pod could not be read"
		return c
	}
	if !owned {
		return nil
	}
	for _, pc := range pod.Status.Conditions {
		if pc.Type != corev1.PodScheduled {
			continue
		}
		c.Status, c.Reason, c.Message = metav1.ConditionStatus(pc.Status), pc.Reason, pc.Message
		if c.Reason == "" {
			// metav1.Condition requires a reason; the scheduler sets none on
			// success.
			c.Reason = agentsv1beta1.ReasonPodSchedulingUnknown
			if c.Status == metav1.ConditionTrue {
				c.Reason = agentsv1beta1.ReasonPodScheduled
			}
		}
		return c
	}
	c.Status, c.Reason = metav1.ConditionUnknown, agentsv1beta1.ReasonPodSchedulingUnknown
	c.Message = "The pod has not reported a PodScheduled condition yet"
	return c
}

func readyCondition(sb *agentsv1beta1.Sandbox, pod *corev1.Pod, svc *corev1.Service, err error) metav1.Condition {
	c := metav1.Condition{
		Type:   agentsv1beta1.ConditionReady.String(),
		Status: metav1.ConditionFalse,
		Reason: agentsv1beta1.ReasonDependenciesNotReady,
	}
	switch {
	case errors.Is(err, errMultiplePods):
		c.Reason, c.Message = agentsv1beta1.ReasonMultiplePods, errMultiplePods.Error()
		return c
	case err != nil:
		c.Reason, c.Message = agentsv1beta1.ReasonReconcilerError, "Error seen: "+err.Error()
		return c
	case sb.Spec.OperatingMode == agentsv1beta1.OperatingModeSuspended:
		c.Reason, c.Message = agentsv1beta1.ReasonSandboxSuspended, "Sandbox is suspended"
		if pod != nil {
			c.Message = "Sandbox is suspending"
		}
		return c
	}

	podReady := false
	switch {
	case pod == nil:
		c.Message = "Pod does not exist"
	case pod.Status.Phase == corev1.PodSucceeded:
		c.Reason, c.Message = agentsv1beta1.ReasonPodSucceeded, "Pod completed successfully"
		return c
	case pod.Status.Phase == corev1.PodFailed:
		c.Reason, c.Message = agentsv1beta1.ReasonPodFailed, "Pod failed"
		return c
	case !pod.DeletionTimestamp.IsZero():
		// Upstream would still call a terminating-but-ready pod Ready; a pod on
		// its way out is not something a caller should connect to.
		c.Message = "Pod is terminating"
	case pod.Status.Phase != corev1.PodRunning:
		c.Message = "Pod exists with phase: " + string(pod.Status.Phase)
	case !podConditionTrue(pod, corev1.PodReady):
		c.Message = "Pod is Running but not Ready"
	case len(pod.Status.PodIPs) == 0:
		c.Message = "Pod is Ready but has no podIPs yet"
	default:
		c.Message = "Pod is Ready"
		podReady = true
	}

	// A Service is part of readiness when asked for, or (spec.service unset)
	// when one already exists: that keeps older sandboxes, whose Service
	// predates the field, honest.
	svcRequired := svc != nil
	if sb.Spec.Service != nil {
		svcRequired = *sb.Spec.Service
	}
	svcReady := true
	if svcRequired {
		svcReady = svc != nil
		if svcReady {
			c.Message += "; Service Exists"
		} else {
			c.Message += "; Service does not exist"
		}
	}
	if podReady && svcReady {
		c.Status, c.Reason = metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady
	}
	return c
}

func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// patchStatus writes the status if it changed. The stand-in is the only
// writer of Sandbox status, so a plain merge patch (no resourceVersion
// precondition) cannot lose anyone else's update.
func (r *sandboxReconciler) patchStatus(ctx context.Context, sb *agentsv1beta1.Sandbox, before *agentsv1beta1.SandboxStatus) error {
	if apiequality.Semantic.DeepEqual(before, &sb.Status) {
		return nil
	}
	base := sb.DeepCopy()
	base.Status = *before
	if err := r.client.Status().Patch(ctx, sb, client.MergeFrom(base)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// podNameFor is the pod that backs the sandbox: normally the sandbox's own
// name, or the name recorded when a pre-existing pod was adopted.
func podNameFor(sb *agentsv1beta1.Sandbox) string {
	if n := sb.Annotations[sandboxapi.AnnotationPodName]; n != "" {
		return n
	}
	return sb.Name
}

// reconcilePod makes the pod match the operating mode. It returns the pod the
// status should describe (possibly terminating, possibly not ours) or nil.
func (r *sandboxReconciler) reconcilePod(ctx context.Context, sb *agentsv1beta1.Sandbox, hash string) (*corev1.Pod, error) {
	pod, err := r.findPod(ctx, sb, hash)
	if err != nil {
		return nil, err
	}

	if sb.Spec.OperatingMode == agentsv1beta1.OperatingModeSuspended {
		if pod != nil && ownershipOf(pod, sb.UID) == ownedByUs && pod.DeletionTimestamp.IsZero() {
			log.FromContext(ctx).Info("deleting pod of suspended sandbox", "pod", pod.Name)
			if err := r.client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
				return pod, fmt.Errorf("deleting pod: %w", err)
			}
		}
		// The next resume creates a pod named like the sandbox again.
		return pod, r.setPodNameAnnotation(ctx, sb, "")
	}

	if pod == nil {
		pod, err = r.createPod(ctx, sb, hash)
		if err != nil {
			return nil, err
		}
		return pod, r.setPodNameAnnotation(ctx, sb, pod.Name)
	}

	switch ownershipOf(pod, sb.UID) {
	case ownedByOther:
		return pod, fmt.Errorf("pod %q is controlled by another object", pod.Name)
	case unowned:
		// Only a pod that was stamped for this sandbox (or explicitly marked
		// adoptable) may be taken over; anything else might be someone's
		// workload that merely shares the name.
		if pod.Labels[sandboxapi.LabelSandboxNameHash] != hash && pod.Labels[sandboxapi.LabelAdoptable] != "true" {
			return pod, fmt.Errorf("pod %q exists but is not controlled by this sandbox", pod.Name)
		}
		patch := client.MergeFrom(pod.DeepCopy())
		if err := controllerutil.SetControllerReference(sb, pod, r.scheme); err != nil {
			return pod, err
		}
		syncPodMetadata(pod, sb, hash)
		if err := r.client.Patch(ctx, pod, patch); err != nil {
			return pod, fmt.Errorf("adopting pod: %w", err)
		}
	case ownedByUs:
		patch := client.MergeFrom(pod.DeepCopy())
		if syncPodMetadata(pod, sb, hash) {
			if err := r.client.Patch(ctx, pod, patch); err != nil {
				return pod, fmt.Errorf("updating pod metadata: %w", err)
			}
		}
	}
	return pod, r.setPodNameAnnotation(ctx, sb, pod.Name)
}

// findPod resolves the sandbox's pod from the cache. Ownership, not the name,
// is authoritative: a pod this sandbox controls wins over the recorded name.
func (r *sandboxReconciler) findPod(ctx context.Context, sb *agentsv1beta1.Sandbox, hash string) (*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.client.List(ctx, &list, client.InNamespace(sb.Namespace), client.MatchingLabels{sandboxapi.LabelSandboxNameHash: hash}); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	var owned []*corev1.Pod
	for i := range list.Items {
		if ownershipOf(&list.Items[i], sb.UID) == ownedByUs {
			owned = append(owned, &list.Items[i])
		}
	}
	if len(owned) > 1 {
		return nil, errMultiplePods
	}
	if len(owned) == 1 {
		return owned[0], nil
	}
	pod := &corev1.Pod{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: sb.Namespace, Name: podNameFor(sb)}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading pod: %w", err)
	}
	return pod, nil
}

// setPodNameAnnotation records (or, with name "", clears) the backing pod's
// name on the Sandbox, as upstream does so that clients can find the pod.
func (r *sandboxReconciler) setPodNameAnnotation(ctx context.Context, sb *agentsv1beta1.Sandbox, name string) error {
	current, has := sb.Annotations[sandboxapi.AnnotationPodName]
	if (name == "" && !has) || (name != "" && current == name) {
		return nil
	}
	patch := client.MergeFrom(sb.DeepCopy())
	if name == "" {
		delete(sb.Annotations, sandboxapi.AnnotationPodName)
	} else {
		if sb.Annotations == nil {
			sb.Annotations = map[string]string{}
		}
		sb.Annotations[sandboxapi.AnnotationPodName] = name
	}
	if err := r.client.Patch(ctx, sb, patch); err != nil {
		return fmt.Errorf("recording pod name on sandbox: %w", client.IgnoreNotFound(err))
	}
	return nil
}

func (r *sandboxReconciler) createPod(ctx context.Context, sb *agentsv1beta1.Sandbox, hash string) (*corev1.Pod, error) {
	spec := sb.Spec.PodTemplate.Spec.DeepCopy()
	spec.Volumes = withClaimVolumes(spec.Volumes, sb)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sb.Name, Namespace: sb.Namespace},
		Spec:       *spec,
	}
	syncPodMetadata(pod, sb, hash)
	if err := controllerutil.SetControllerReference(sb, pod, r.scheme); err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("creating pod", "pod", pod.Name)
	if err := r.client.Create(ctx, pod, client.FieldOwner(fieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// The cache had not seen it yet; the pod's own watch event brings
			// us back with the real object.
			return nil, fmt.Errorf("pod %q already exists; waiting for the cache", pod.Name)
		}
		return nil, fmt.Errorf("creating pod: %w", err)
	}
	return pod, nil
}

// withClaimVolumes points the pod at the sandbox's PVCs. A template volume of
// the same name is replaced, as a StatefulSet does with its claim templates.
func withClaimVolumes(volumes []corev1.Volume, sb *agentsv1beta1.Sandbox) []corev1.Volume {
	if len(sb.Spec.VolumeClaimTemplates) == 0 {
		return volumes
	}
	claims := map[string]bool{}
	for _, t := range sb.Spec.VolumeClaimTemplates {
		claims[t.Metadata.Name] = true
	}
	out := slices.DeleteFunc(slices.Clone(volumes), func(v corev1.Volume) bool { return claims[v.Name] })
	for _, t := range sb.Spec.VolumeClaimTemplates {
		out = append(out, corev1.Volume{
			Name: t.Metadata.Name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: pvcName(t.Metadata.Name, sb.Name),
			}},
		})
	}
	return out
}

func pvcName(template, sandbox string) string { return template + "-" + sandbox }

// extensionLabelKeys are the reserved labels the controller itself copies from
// a Sandbox to its pod; their presence is recomputed on every pass so that
// adoption by a claim strips the warm-pool label from the pod.
var extensionLabelKeys = []string{sandboxapi.LabelWarmPoolSandbox, sandboxapi.LabelSandboxTemplateRefHash}

func extensionLabels(sb *agentsv1beta1.Sandbox) map[string]string {
	out := map[string]string{}
	if extensionsController(sb, "") == nil {
		return out
	}
	if extensionsController(sb, extv1beta1.SandboxWarmPoolKind) != nil && sb.Labels[sandboxapi.LabelWarmPoolSandbox] != "" {
		out[sandboxapi.LabelWarmPoolSandbox] = sb.Labels[sandboxapi.LabelWarmPoolSandbox]
	}
	if sb.Labels[sandboxapi.LabelSandboxTemplateRefHash] != "" {
		out[sandboxapi.LabelSandboxTemplateRefHash] = sb.Labels[sandboxapi.LabelSandboxTemplateRefHash]
	}
	return out
}

// syncPodMetadata makes the pod's labels and annotations follow the sandbox's
// pod template and reports whether anything changed. Keys that the template
// once set and no longer does are removed (tracked in the propagated-*
// annotations); keys set by anybody else are left alone.
func syncPodMetadata(pod *corev1.Pod, sb *agentsv1beta1.Sandbox, hash string) bool {
	before := pod.ObjectMeta.DeepCopy()
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	tmpl := sb.Spec.PodTemplate.Metadata

	labelKeys := propagate(pod.Labels, tmpl.Labels, pod.Annotations[sandboxapi.AnnotationPropagatedLabels])
	annotationKeys := propagate(pod.Annotations, tmpl.Annotations, pod.Annotations[sandboxapi.AnnotationPropagatedAnnotations])

	ext := extensionLabels(sb)
	for _, k := range extensionLabelKeys {
		if v, ok := ext[k]; ok {
			pod.Labels[k] = v
		} else {
			delete(pod.Labels, k)
		}
	}
	pod.Labels[sandboxapi.LabelSandboxNameHash] = hash
	pod.Labels[LabelManagedBy] = ManagedByValue

	setOrDelete(pod.Annotations, sandboxapi.AnnotationPropagatedLabels, strings.Join(labelKeys, ","))
	setOrDelete(pod.Annotations, sandboxapi.AnnotationPropagatedAnnotations, strings.Join(annotationKeys, ","))
	return !apiequality.Semantic.DeepEqual(before.Labels, pod.Labels) ||
		!apiequality.Semantic.DeepEqual(before.Annotations, pod.Annotations)
}

// propagate copies the non-reserved entries of want into have, removes the
// entries listed in previously (a comma-separated list) that want no longer
// has, and returns the sorted keys it now manages.
func propagate(have, want map[string]string, previously string) []string {
	var keys []string
	for k, v := range want {
		if sandboxapi.IsReservedKey(k) {
			continue
		}
		have[k] = v
		keys = append(keys, k)
	}
	for _, k := range strings.Split(previously, ",") {
		if _, still := want[k]; k != "" && !still && !sandboxapi.IsReservedKey(k) {
			delete(have, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func setOrDelete(m map[string]string, k, v string) {
	if v == "" {
		delete(m, k)
		return
	}
	m[k] = v
}

func (r *sandboxReconciler) reconcilePVCs(ctx context.Context, sb *agentsv1beta1.Sandbox, hash string) error {
	var errs error
	for _, t := range sb.Spec.VolumeClaimTemplates {
		name := pvcName(t.Metadata.Name, sb.Name)
		pvc := &corev1.PersistentVolumeClaim{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: sb.Namespace, Name: name}, pvc)
		switch {
		case err == nil:
			switch ownershipOf(pvc, sb.UID) {
			case ownedByOther:
				errs = errors.Join(errs, fmt.Errorf("PVC %q is controlled by another object", name))
			case unowned:
				if pvc.Labels[sandboxapi.LabelSandboxNameHash] != hash && pvc.Labels[sandboxapi.LabelAdoptable] != "true" {
					errs = errors.Join(errs, fmt.Errorf("PVC %q exists but is not controlled by this sandbox", name))
					continue
				}
				patch := client.MergeFrom(pvc.DeepCopy())
				if err := controllerutil.SetControllerReference(sb, pvc, r.scheme); err != nil {
					errs = errors.Join(errs, err)
					continue
				}
				errs = errors.Join(errs, r.client.Patch(ctx, pvc, patch))
			}
		case apierrors.IsNotFound(err):
			labels := maps.Clone(t.Metadata.Labels)
			if labels == nil {
				labels = map[string]string{}
			}
			labels[sandboxapi.LabelSandboxNameHash] = hash
			pvc = &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name: name, Namespace: sb.Namespace,
					Labels: withManagedBy(labels), Annotations: maps.Clone(t.Metadata.Annotations),
				},
				Spec: *t.Spec.DeepCopy(),
			}
			if err := controllerutil.SetControllerReference(sb, pvc, r.scheme); err != nil {
				errs = errors.Join(errs, err)
				continue
			}
			log.FromContext(ctx).Info("creating PVC", "pvc", name)
			if err := r.client.Create(ctx, pvc, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
				errs = errors.Join(errs, fmt.Errorf("creating PVC %q: %w", name, err))
			}
		default:
			errs = errors.Join(errs, fmt.Errorf("reading PVC %q: %w", name, err))
		}
	}
	return errs
}

// reconcileService implements spec.service: true keeps a headless Service
// named like the sandbox, false deletes ours, unset leaves whatever exists.
// It returns the Service that counts for status, if any.
func (r *sandboxReconciler) reconcileService(ctx context.Context, sb *agentsv1beta1.Sandbox, hash string) (*corev1.Service, error) {
	want := sb.Spec.Service
	selector := map[string]string{sandboxapi.LabelSandboxNameHash: hash}
	ports := servicePorts(&sb.Spec.PodTemplate.Spec)

	svc := &corev1.Service{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(sb), svc)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading service: %w", err)
	}
	if apierrors.IsNotFound(err) {
		if want == nil || !*want {
			r.clearServiceStatus(sb)
			return nil, nil
		}
		svc = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{
				Name: sb.Name, Namespace: sb.Namespace,
				Labels: withManagedBy(map[string]string{sandboxapi.LabelSandboxNameHash: hash}),
			},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: selector, Ports: ports},
		}
		if err := controllerutil.SetControllerReference(sb, svc, r.scheme); err != nil {
			return nil, err
		}
		log.FromContext(ctx).Info("creating headless service", "service", svc.Name)
		if err := r.client.Create(ctx, svc, client.FieldOwner(fieldOwner)); err != nil {
			return nil, fmt.Errorf("creating service: %w", err)
		}
		r.setServiceStatus(sb, svc)
		return svc, nil
	}

	own := ownershipOf(svc, sb.UID)
	if want != nil && !*want {
		if own == ownedByUs && svc.DeletionTimestamp.IsZero() {
			log.FromContext(ctx).Info("deleting service (spec.service is false)", "service", svc.Name)
			if err := r.client.Delete(ctx, svc); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("deleting service: %w", err)
			}
		}
		r.clearServiceStatus(sb)
		return nil, nil
	}

	switch own {
	case ownedByOther:
		return nil, fmt.Errorf("service %q is controlled by another object", svc.Name)
	case unowned:
		if want == nil {
			// Not asked for and not ours: none of our business.
			r.clearServiceStatus(sb)
			return nil, nil
		}
		if svc.Labels[sandboxapi.LabelSandboxNameHash] != hash && svc.Labels[sandboxapi.LabelAdoptable] != "true" {
			return nil, fmt.Errorf("service %q exists but is not controlled by this sandbox", svc.Name)
		}
		if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
			return nil, fmt.Errorf("service %q is not headless and clusterIP cannot be changed", svc.Name)
		}
		patch := client.MergeFrom(svc.DeepCopy())
		if err := controllerutil.SetControllerReference(sb, svc, r.scheme); err != nil {
			return nil, err
		}
		svc.Labels = withManagedBy(mergeMaps(svc.Labels, map[string]string{sandboxapi.LabelSandboxNameHash: hash}))
		svc.Spec.Selector, svc.Spec.Ports = selector, ports
		if err := r.client.Patch(ctx, svc, patch); err != nil {
			return nil, fmt.Errorf("adopting service: %w", err)
		}
	case ownedByUs:
		patch := client.MergeFrom(svc.DeepCopy())
		changed := false
		if svc.Labels[sandboxapi.LabelSandboxNameHash] != hash {
			svc.Labels = mergeMaps(svc.Labels, map[string]string{sandboxapi.LabelSandboxNameHash: hash})
			changed = true
		}
		if !apiequality.Semantic.DeepEqual(svc.Spec.Selector, selector) {
			svc.Spec.Selector, changed = selector, true
		}
		if want != nil && !portsEqual(svc.Spec.Ports, ports) {
			svc.Spec.Ports, changed = ports, true
		}
		if changed {
			if err := r.client.Patch(ctx, svc, patch); err != nil {
				return nil, fmt.Errorf("updating service: %w", err)
			}
		}
	}
	r.setServiceStatus(sb, svc)
	return svc, nil
}

func (r *sandboxReconciler) setServiceStatus(sb *agentsv1beta1.Sandbox, svc *corev1.Service) {
	sb.Status.Service = svc.Name
	sb.Status.ServiceFQDN = svc.Name + "." + svc.Namespace + ".svc." + r.clusterDomain
}

func (r *sandboxReconciler) clearServiceStatus(sb *agentsv1beta1.Sandbox) {
	sb.Status.Service, sb.Status.ServiceFQDN = "", ""
}

func mergeMaps(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// servicePorts exposes every container port (and those of restartable init
// containers, i.e. sidecars) once per port/protocol pair, sorted, so the
// headless Service also publishes SRV records. Unnamed ports get a generated
// name that cannot clash with a name the user chose.
func servicePorts(spec *corev1.PodSpec) []corev1.ServicePort {
	type key struct {
		port     int32
		protocol corev1.Protocol
	}
	named := map[key]string{}
	taken := map[string]bool{}
	var order []key
	add := func(c corev1.Container) {
		for _, p := range c.Ports {
			if p.ContainerPort == 0 {
				continue
			}
			k := key{p.ContainerPort, p.Protocol}
			if k.protocol == "" {
				k.protocol = corev1.ProtocolTCP
			}
			if _, seen := named[k]; !seen {
				named[k] = ""
				order = append(order, k)
			}
			if p.Name != "" && named[k] == "" && !taken[p.Name] {
				named[k], taken[p.Name] = p.Name, true
			}
		}
	}
	for _, c := range spec.Containers {
		add(c)
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	slices.SortFunc(order, func(a, b key) int {
		if a.port != b.port {
			return int(a.port - b.port)
		}
		return strings.Compare(string(a.protocol), string(b.protocol))
	})
	var out []corev1.ServicePort
	for _, k := range order {
		name := named[k]
		if name == "" {
			base := fmt.Sprintf("p-%d-%s", k.port, strings.ToLower(string(k.protocol)))
			name = base
			for i := 2; taken[name]; i++ {
				name = fmt.Sprintf("%s-%d", base, i)
			}
			taken[name] = true
		}
		out = append(out, corev1.ServicePort{Name: name, Port: k.port, Protocol: k.protocol, TargetPort: intstr.FromInt32(k.port)})
	}
	return out
}

func portsEqual(a, b []corev1.ServicePort) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.ServicePort) bool {
		return x.Name == y.Name && x.Port == y.Port && x.Protocol == y.Protocol && x.TargetPort == y.TargetPort
	})
}
