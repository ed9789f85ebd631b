package sandboxsim

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// ignoreNamespaceTermination drops the errors a reconciler gets while its
// namespace is being deleted: nothing can be created there any more, the
// garbage collector removes what exists, and retrying only spams the log.
func ignoreNamespaceTermination(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && namespaceGone(err) {
			return reconcile.Result{}, nil
		}
		return res, err
	})
}

// namespaceGone reports whether err, or any error joined or wrapped in it,
// says the namespace is terminating or no longer exists.
func namespaceGone(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if namespaceGone(e) {
				return true
			}
		}
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return true
	}
	d := status.Status().Details
	return apierrors.IsNotFound(err) && d != nil && d.Kind == "namespaces"
}

// ownership classifies an object relative to a would-be controller.
type ownership int

const (
	ownedByUs ownership = iota
	unowned
	ownedByOther
)

func ownershipOf(obj metav1.Object, ownerUID types.UID) ownership {
	ref := metav1.GetControllerOf(obj)
	switch {
	case ref == nil:
		return unowned
	case ref.UID == ownerUID:
		return ownedByUs
	default:
		return ownedByOther
	}
}

// extensionsController returns obj's controller reference when the controller
// is an extensions.agents.x-k8s.io object of the given kind (any kind for ""),
// whatever its version; otherwise nil.
func extensionsController(obj metav1.Object, kind string) *metav1.OwnerReference {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || (kind != "" && ref.Kind != kind) {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != extv1beta1.Group {
		return nil
	}
	return ref
}

// withManagedBy returns labels plus the stand-in's managed-by marker.
func withManagedBy(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[LabelManagedBy] = ManagedByValue
	return out
}

func sandboxReady(sb *agentsv1beta1.Sandbox) bool {
	return meta.IsStatusConditionTrue(sb.Status.Conditions, agentsv1beta1.ConditionReady.String())
}

// applySecureDefaults hardens a pod spec taken from a template the way upstream
// does for every Sandbox it builds from a SandboxTemplate: no service account
// token unless asked for, and, under the managed default NetworkPolicy (which
// blocks cluster DNS), public resolvers when the template chose no DNS policy.
func applySecureDefaults(tmpl *extv1beta1.SandboxTemplate, spec *corev1.PodSpec) {
	if spec.AutomountServiceAccountToken == nil {
		off := false
		spec.AutomountServiceAccountToken = &off
	}
	if networkPolicyManaged(tmpl) && tmpl.Spec.NetworkPolicy == nil && spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSNone
		spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8", "1.1.1.1"}}
	}
}

func networkPolicyManaged(tmpl *extv1beta1.SandboxTemplate) bool {
	m := tmpl.Spec.NetworkPolicyManagement
	return m == "" || m == extv1beta1.NetworkPolicyManaged
}

// blueprintHash fingerprints a template's sandbox blueprint. Warm pools stamp
// it on their sandboxes so that a template change can be detected without
// comparing pod specs that the API server may have defaulted.
func blueprintHash(tmpl *extv1beta1.SandboxTemplate) (string, error) {
	b, err := json.Marshal(tmpl.Spec.SandboxBlueprint)
	if err != nil {
		return "", err
	}
	return sandboxapi.NameHash(string(b)), nil
}
