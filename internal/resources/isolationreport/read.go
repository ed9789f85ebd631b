package isolationreport

import (
	"context"
	"fmt"
	"net/netip"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// dangerousActions are what the report asks a SubjectAccessReview about for
// every service account in use: reading secrets, starting pods (and so
// mounting any secret or account of the namespace), running commands in
// other pods, and anything at all cluster-wide.
var dangerousActions = []struct {
	name string
	attr authorizationv1.ResourceAttributes
	// clusterWide: asked without a namespace.
	clusterWide bool
}{
	{"get secrets", authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets"}, false},
	{"create pods", authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods"}, false},
	{"create pods/exec", authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "exec"}, false},
	{"* * cluster-wide", authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}, true},
}

// read lists what the report needs: one list per kind, whatever the number
// of sandboxes, plus the SubjectAccessReviews of each service account in
// use. What a namespaced user may not read (namespaces, RuntimeClasses, the
// kubernetes Service and its EndpointSlices) narrows the report instead of
// failing it, and the verdicts say what is unknown.
func read(ctx context.Context, c *kube.Client, ns, routerNS string) (inventory, diag.Diagnostics) {
	var diags diag.Diagnostics
	inv := inventory{namespace: ns, pods: map[string]*corev1.Pod{}, serviceAccounts: map[string]*corev1.ServiceAccount{},
		namespaces: map[string]map[string]string{}, permissions: map[string][]string{}}
	cs, err := c.Clientset()
	if err != nil {
		diags.AddError("Cannot build the Kubernetes client", err.Error())
		return inv, diags
	}
	fail := func(err error, kind string, gvr k8sschema.GroupVersionResource, namespace string) diag.Diagnostics {
		var out diag.Diagnostics
		out.AddError("Cannot read the sandboxes' isolation",
			fmt.Sprintf("The isolation report reads the cluster at %s during plan (when its configuration is known) and at "+
				"apply; listing %s failed, so there is no report. Inside a `check` block this is a warning; anywhere else it "+
				"stops the plan.", c.RESTConfig().Host, kind))
		out.Append(kube.Diagnostics(err, "list", kube.ObjectRef{GVR: gvr, Kind: kind, Namespace: namespace})...)
		return out
	}

	list, err := c.List(ctx, sandboxapi.SandboxGVR, ns, "")
	switch {
	case err == nil:
		for i := range list.Items {
			var sb agentsv1beta1.Sandbox
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &sb); err != nil {
				diags.AddError("Cannot read a Sandbox", fmt.Sprintf("Sandbox %s/%s: %v", ns, list.Items[i].GetName(), err))
				return inv, diags
			}
			inv.sandboxes = append(inv.sandboxes, sb)
		}
	case kube.IsResourceNotServed(err):
		// The CRDs are not installed (yet): no sandbox runs.
	default:
		return inv, fail(err, "Sandboxes", sandboxapi.SandboxGVR, ns)
	}

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return inv, fail(err, "Pods", corev1.SchemeGroupVersion.WithResource("pods"), ns)
	}
	for i := range pods.Items {
		inv.pods[pods.Items[i].Name] = &pods.Items[i]
	}
	pols, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return inv, fail(err, "NetworkPolicies", k8sschema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, ns)
	}
	inv.policies = pols.Items
	sas, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return inv, fail(err, "ServiceAccounts", corev1.SchemeGroupVersion.WithResource("serviceaccounts"), ns)
	}
	for i := range sas.Items {
		inv.serviceAccounts[sas.Items[i].Name] = &sas.Items[i]
	}

	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	switch {
	case err == nil:
		inv.namespacesListed = true
		for _, n := range nss.Items {
			l := map[string]string{}
			for k, v := range n.Labels {
				l[k] = v
			}
			inv.namespaces[n.Name] = l
		}
	case apierrors.IsForbidden(err):
		inv.namespaces[ns] = map[string]string{namespaceNameLabel: ns}
	default:
		return inv, fail(err, "Namespaces", corev1.SchemeGroupVersion.WithResource("namespaces"), "")
	}
	if _, ok := inv.namespaces[ns]; !ok {
		inv.namespaces[ns] = map[string]string{namespaceNameLabel: ns}
	}

	rcs, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	switch {
	case err == nil:
		inv.runtimeClasses = map[string]string{}
		for _, rc := range rcs.Items {
			inv.runtimeClasses[rc.Name] = rc.Handler
		}
	case apierrors.IsForbidden(err):
	default:
		return inv, fail(err, "RuntimeClasses", k8sschema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}, "")
	}

	svc, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	switch {
	case err == nil:
		if a, perr := netip.ParseAddr(svc.Spec.ClusterIP); perr == nil && len(svc.Spec.Ports) > 0 {
			inv.apiService = netip.AddrPortFrom(a, uint16(svc.Spec.Ports[0].Port)) //nolint:gosec // a port
		}
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
	default:
		return inv, fail(err, "the kubernetes Service", corev1.SchemeGroupVersion.WithResource("services"), metav1.NamespaceDefault)
	}
	epSlices, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	switch {
	case err == nil:
		for _, s := range epSlices.Items {
			for _, p := range s.Ports {
				if p.Port == nil {
					continue
				}
				for _, e := range s.Endpoints {
					for _, a := range e.Addresses {
						if ip, perr := netip.ParseAddr(a); perr == nil {
							inv.apiEndpoints = append(inv.apiEndpoints, netip.AddrPortFrom(ip, uint16(*p.Port))) //nolint:gosec // a port
						}
					}
				}
			}
		}
	case apierrors.IsForbidden(err):
	default:
		return inv, fail(err, "the kubernetes Service's EndpointSlices", discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), metav1.NamespaceDefault)
	}

	var d diag.Diagnostics
	inv.router, d = readRouter(ctx, cs, routerNS)
	if diags.Append(d...); diags.HasError() {
		return inv, diags
	}
	diags.Append(reviewAccounts(ctx, cs.AuthorizationV1().SubjectAccessReviews(), &inv)...)
	return inv, diags
}

type sarClient interface {
	Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// reviewAccounts asks, for each service account the sandboxes use, which
// dangerous actions it may perform. A user who may not create
// SubjectAccessReviews gets a warning and no permissions in the report.
func reviewAccounts(ctx context.Context, sars sarClient, inv *inventory) diag.Diagnostics {
	var diags diag.Diagnostics
	accounts := map[string]bool{}
	for _, sb := range inv.sandboxes {
		spec := sb.Spec.PodTemplate.Spec
		if p := podOf(*inv, &sb); p != nil {
			spec = p.Spec
		}
		sa := spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		accounts[sa] = true
	}
	names := make([]string, 0, len(accounts))
	for n := range accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, sa := range names {
		allowed := []string{}
		for _, a := range dangerousActions {
			attr := a.attr
			if !a.clusterWide {
				attr.Namespace = inv.namespace
			}
			r, err := sars.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:               "system:serviceaccount:" + inv.namespace + ":" + sa,
				Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + inv.namespace, "system:authenticated"},
				ResourceAttributes: &attr,
			}}, metav1.CreateOptions{})
			if err != nil {
				diags.AddWarning("Service account permissions not reviewed",
					fmt.Sprintf("The report could not ask the API server what the service account %s/%s may do (a SubjectAccessReview): %v. "+
						"Its `identity.permissions` are left empty, which proves nothing.", inv.namespace, sa, err))
				return diags
			}
			if r.Status.Allowed {
				allowed = append(allowed, a.name)
			}
		}
		inv.permissions[sa] = allowed
	}
	return diags
}
