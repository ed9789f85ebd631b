package sandboxsim

import (
	"context"
	"encoding/json"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// templateReconciler owns the shared NetworkPolicy of each SandboxTemplate.
type templateReconciler struct {
	client client.Client
	scheme *runtime.Scheme
}

func (r *templateReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("sandboxsim-sandboxtemplate").
		For(&extv1beta1.SandboxTemplate{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Complete(ignoreNamespaceTermination(r))
}

func (r *templateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tmpl := &extv1beta1.SandboxTemplate{}
	if err := r.client.Get(ctx, req.NamespacedName, tmpl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !tmpl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// Upstream labels each template with its own ref hash, which lets the
	// policy's pod selector value be looked up from the template.
	if err := r.ensureRefHashLabel(ctx, tmpl); err != nil {
		return ctrl.Result{}, err
	}

	key := types.NamespacedName{Namespace: tmpl.Namespace, Name: sandboxapi.TemplateNetworkPolicyName(tmpl.Name)}
	existing := &networkingv1.NetworkPolicy{}
	err := r.client.Get(ctx, key, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	found := err == nil
	if found && !metav1.IsControlledBy(existing, tmpl) {
		// Someone else's policy holds the reserved name; never touch it.
		if networkPolicyManaged(tmpl) {
			return ctrl.Result{}, fmt.Errorf("NetworkPolicy %s exists and is not controlled by SandboxTemplate %s", key, tmpl.Name)
		}
		return ctrl.Result{}, nil
	}

	if !networkPolicyManaged(tmpl) {
		if found && existing.DeletionTimestamp.IsZero() {
			log.FromContext(ctx).Info("deleting NetworkPolicy of unmanaged template", "networkPolicy", key.Name)
			return ctrl.Result{}, client.IgnoreNotFound(r.client.Delete(ctx, existing))
		}
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.applyNetworkPolicy(ctx, tmpl, desiredNetworkPolicySpec(tmpl))
}

func (r *templateReconciler) ensureRefHashLabel(ctx context.Context, tmpl *extv1beta1.SandboxTemplate) error {
	want := sandboxapi.NameHash(tmpl.Name)
	if tmpl.Labels[sandboxapi.LabelSandboxTemplateRefHash] == want {
		return nil
	}
	patch := client.MergeFrom(tmpl.DeepCopy())
	tmpl.Labels = mergeMaps(tmpl.Labels, map[string]string{sandboxapi.LabelSandboxTemplateRefHash: want})
	return r.client.Patch(ctx, tmpl, patch)
}

// applyNetworkPolicy writes the policy with server-side apply. Unlike a
// compare-then-update, an apply whose content the server already has is a
// no-op that bumps no resourceVersion, so server-side defaulting of the rules
// can never make this controller chase its own watch events.
func (r *templateReconciler) applyNetworkPolicy(ctx context.Context, tmpl *extv1beta1.SandboxTemplate, spec networkingv1.NetworkPolicySpec) error {
	// The apply configuration mirrors the API type's JSON, so a round trip
	// converts the typed spec without a field-by-field copy.
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	specAC := &networkingv1ac.NetworkPolicySpecApplyConfiguration{}
	if err := json.Unmarshal(raw, specAC); err != nil {
		return err
	}
	gvk := extv1beta1.SandboxTemplateGVK
	np := networkingv1ac.NetworkPolicy(sandboxapi.TemplateNetworkPolicyName(tmpl.Name), tmpl.Namespace).
		WithLabels(map[string]string{LabelManagedBy: ManagedByValue}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(gvk.GroupVersion().String()).
			WithKind(gvk.Kind).
			WithName(tmpl.Name).
			WithUID(tmpl.UID).
			WithController(true).
			WithBlockOwnerDeletion(true)).
		WithSpec(specAC)
	return r.client.Apply(ctx, np, client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// desiredNetworkPolicySpec selects the template's sandbox pods by the
// template-ref-hash label and applies either the template's own rules or
// upstream's secure default.
func desiredNetworkPolicySpec(tmpl *extv1beta1.SandboxTemplate) networkingv1.NetworkPolicySpec {
	spec := networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{sandboxapi.LabelSandboxTemplateRefHash: sandboxapi.NameHash(tmpl.Name)}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
	}
	if np := tmpl.Spec.NetworkPolicy; np != nil {
		spec.Ingress, spec.Egress = np.Ingress, np.Egress
		return spec
	}
	spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
		// Only the sandbox router, in the controller's namespace, may connect.
		From: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "agent-sandbox-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sandbox-router"}},
		}},
	}}
	spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
		// The public internet only: private ranges (the cluster and VPC,
		// cluster DNS included), link-local (the metadata server) and their
		// IPv6 counterparts are excluded.
		To: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fc00::/7", "fe80::/10"}}},
		},
	}}
	return spec
}
