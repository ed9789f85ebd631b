package isolationreport

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netpolicy"
)

// The sandbox router as upstream's deploy manifests name it
// (sandbox-router/deploy/deployment.yaml of v0.5.6, v1.0.1 and v1.0.3, the
// releases with a router; agentsandbox_sandbox_router installs the same).
const (
	defaultRouterNamespace = "agent-sandbox-system"
	routerDeployment       = "sandbox-router"
	routerContainer        = "sandbox-router"
	routerProxyPort        = 8080
	routerTLSPort          = 8443
)

// routerInventory is what read found of the router.
type routerInventory struct {
	namespace  string
	deployment *appsv1.Deployment // nil: not installed
	policies   []networkingv1.NetworkPolicy
}

// routerReportModel is the report's `router`.
type routerReportModel struct {
	Installed     bool                  `tfsdk:"installed"`
	Namespace     string                `tfsdk:"namespace"`
	AuthzMode     string                `tfsdk:"authz_mode"`
	RequiresToken bool                  `tfsdk:"requires_token"`
	Policies      []string              `tfsdk:"policies"`
	ReachableFrom map[string]reachModel `tfsdk:"reachable_from"`
}

// readRouter reads the router's Deployment and the NetworkPolicies of its
// namespace: two requests.
func readRouter(ctx context.Context, cs kubernetes.Interface, ns string) (routerInventory, diag.Diagnostics) {
	var diags diag.Diagnostics
	r := routerInventory{namespace: ns}
	dep, err := cs.AppsV1().Deployments(ns).Get(ctx, routerDeployment, metav1.GetOptions{})
	switch {
	case err == nil:
		r.deployment = dep
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		return r, diags
	default:
		diags.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			Kind: "Deployment", Namespace: ns, Name: routerDeployment})...)
		return r, diags
	}
	pols, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	switch {
	case err == nil:
		r.policies = pols.Items
	case apierrors.IsForbidden(err):
	default:
		diags.Append(kube.Diagnostics(err, "list", kube.ObjectRef{GVR: k8sschema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
			Kind: "NetworkPolicy", Namespace: ns})...)
	}
	return r, diags
}

// routerFlags are the router container's --flag=value arguments.
func routerFlags(dep *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name != routerContainer {
			continue
		}
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			out[name] = value
		}
	}
	return out
}

// analyzeRouter reports the router: its authorization as its flags set it
// (absent flags are upstream's defaults: allow-all, tokenless requests
// allowed; sandbox-router/config/config.go), and who reaches its proxy
// port through the NetworkPolicies of both ends. Its violations carry the
// titles of agentsandbox_sandbox_router's plan-time warnings.
func analyzeRouter(inv inventory) (*routerReportModel, []violationModel) {
	r := inv.router
	m := &routerReportModel{Namespace: r.namespace, Policies: []string{}, ReachableFrom: map[string]reachModel{}}
	if r.deployment == nil {
		return m, nil
	}
	m.Installed = true
	flags := routerFlags(r.deployment)
	m.AuthzMode = flags["authz-mode"]
	if m.AuthzMode == "" {
		m.AuthzMode = "allow-all"
	}
	switch m.AuthzMode {
	case "tokenreview":
		m.RequiresToken = flags["authz-tokenreview-require-token"] == "true"
	case "scoped-token":
		m.RequiresToken = true // scoped tokens are always required (sandbox-router/authz/scopedtoken.go)
	}
	who := "sandbox-router (" + r.namespace + ")"
	var vs []violationModel
	switch {
	case m.AuthzMode == "allow-all":
		vs = append(vs, violationModel{Sandbox: who, Title: "Sandbox router without authorization", Attribute: "authz_mode",
			Message: "The router runs with --authz-mode=allow-all (or without --authz-mode, whose default it is): it forwards " +
				"every request to any sandbox it is asked for, so whoever reaches it can run code in every sandbox."})
	case !m.RequiresToken:
		vs = append(vs, violationModel{Sandbox: who, Title: "Sandbox router lets tokenless requests through", Attribute: "authz_require_token",
			Message: "The router checks tokens with a TokenReview but forwards requests without a token unchecked " +
				"(--authz-tokenreview-require-token is not true)."})
	}

	lbls := r.deployment.Spec.Template.Labels
	var ports []corev1.ContainerPort
	for _, c := range r.deployment.Spec.Template.Spec.Containers {
		if c.Name == routerContainer {
			ports = c.Ports
		}
	}
	self := netpolicy.Pod{Namespace: r.namespace, NamespaceLabels: nsLabels(inv, r.namespace), Labels: lbls, Ports: ports}
	for _, p := range r.policies {
		if netpolicy.Selects(&p, self) {
			m.Policies = append(m.Policies, p.Name)
		}
	}
	port := tcp(routerProxyPort)
	if flags["https-bind-address"] != "" && flags["http-bind-address"] == "" {
		port = tcp(routerTLSPort)
	}
	all := append(append([]networkingv1.NetworkPolicy{}, inv.policies...), r.policies...)
	dst := netpolicy.PodEndpoint(self)
	sources := map[string]target{
		"report_namespace": {"any pod of " + inv.namespace + " (its sandboxes among them)", []netpolicy.Endpoint{anyPodIn(inv, inv.namespace)}, port},
		"other_namespaces": {"any pod of another namespace", otherNamespaces(inv, r.namespace), port},
	}
	if inv.namespace == r.namespace {
		delete(sources, "report_namespace")
	}
	for name, t := range sources {
		m.ReachableFrom[name] = reach(inv, t, func(from netpolicy.Endpoint) (netpolicy.Verdict, netpolicy.Verdict) {
			return netpolicy.Connect(all, from, dst, port)
		}, false)
	}
	if rf, ok := m.ReachableFrom["other_namespaces"]; ok && rf.Verdict == verdictAllowed && m.AuthzMode == "allow-all" {
		vs = append(vs, violationModel{Sandbox: who, Title: "Sandbox router reachable from every namespace", Attribute: "allowed_clients",
			Message: fmt.Sprintf("Pods of other namespaces reach the router's proxy port (%s) and nothing authorizes their "+
				"requests.", rf.Reason)})
	}
	return m, vs
}
