package isolationreport

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var routerPodLabels = map[string]string{"app": "sandbox-router", "app.kubernetes.io/name": "sandbox-router"}

func routerDep(args ...string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: routerDeployment, Namespace: defaultRouterNamespace},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: routerPodLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: routerContainer, Args: args,
				Ports: []corev1.ContainerPort{{Name: "proxy", ContainerPort: routerProxyPort}},
			}}},
		}},
	}
}

// routerPolicy admits the proxy port from the pods of one namespace, as
// agentsandbox_sandbox_router renders allowed_clients.
func routerPolicy(client string, port int32) networkingv1.NetworkPolicy {
	p := intstr.FromInt32(port)
	tcpProto := corev1.ProtocolTCP
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "sandbox-router", Namespace: defaultRouterNamespace},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "sandbox-router"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{namespaceNameLabel: client}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcpProto, Port: &p}},
			}},
		},
	}
}

func routerTitles(vs []violationModel) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Title+" @ "+v.Attribute)
	}
	return out
}

// TestRouterReport: the router's authorization and reachability, and the
// violations they make, from its flags and the policies of both ends.
func TestRouterReport(t *testing.T) {
	hardened := []string{"--http-bind-address=:8080", "--authz-mode=tokenreview", "--authz-tokenreview-require-token=true"}
	for _, tc := range []struct {
		name          string
		dep           *appsv1.Deployment
		routerPols    []networkingv1.NetworkPolicy
		mode          string
		requires      bool
		otherVerdict  string
		reportVerdict string
		port          int64
		violations    []string
	}{
		{name: "not installed"},
		{
			name: "upstream's manifest as it is", dep: routerDep("--http-bind-address=:8080", "--cache-enabled=true"),
			mode: "allow-all", otherVerdict: verdictAllowed, reportVerdict: verdictAllowed, port: routerProxyPort,
			violations: []string{"Sandbox router without authorization @ authz_mode", "Sandbox router reachable from every namespace @ allowed_clients"},
		},
		{
			name: "allow-all behind a policy", dep: routerDep("--authz-mode=allow-all"), routerPols: []networkingv1.NetworkPolicy{routerPolicy("kube-system", routerProxyPort)},
			mode: "allow-all", otherVerdict: verdictAllowed, reportVerdict: verdictDenied, port: routerProxyPort,
			// kube-system is another namespace: some other namespace reaches it.
			violations: []string{"Sandbox router without authorization @ authz_mode", "Sandbox router reachable from every namespace @ allowed_clients"},
		},
		{
			name: "hardened", dep: routerDep(hardened...), routerPols: []networkingv1.NetworkPolicy{routerPolicy("nobody", routerProxyPort)},
			mode: "tokenreview", requires: true, otherVerdict: verdictDenied, reportVerdict: verdictDenied, port: routerProxyPort,
		},
		{
			name: "tokenless", dep: routerDep("--authz-mode=tokenreview"),
			mode: "tokenreview", otherVerdict: verdictAllowed, reportVerdict: verdictAllowed, port: routerProxyPort,
			violations: []string{"Sandbox router lets tokenless requests through @ authz_require_token"},
		},
		{
			name: "scoped tokens over TLS only", dep: routerDep("--http-bind-address=", "--https-bind-address=:8443", "--authz-mode=scoped-token"),
			routerPols: []networkingv1.NetworkPolicy{routerPolicy(ns, routerTLSPort)},
			// The report's namespace is one of the others.
			mode: "scoped-token", requires: true, otherVerdict: verdictAllowed, reportVerdict: verdictAllowed, port: routerTLSPort,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No policy in the report's namespace: the router's decide.
			inv := newInventory(nil, hardenedSpec())
			inv.router = routerInventory{namespace: defaultRouterNamespace, deployment: tc.dep, policies: tc.routerPols}
			r := analyze(inv, nil)
			m := r.Router
			if m.Installed != (tc.dep != nil) || m.Namespace != defaultRouterNamespace || m.AuthzMode != tc.mode || m.RequiresToken != tc.requires {
				t.Errorf("router = %+v", m)
			}
			var got []violationModel
			for _, v := range r.Violations {
				if v.Sandbox == "sandbox-router ("+defaultRouterNamespace+")" {
					got = append(got, v)
				}
			}
			if titles := routerTitles(got); !slices.Equal(titles, tc.violations) {
				t.Errorf("violations %v, want %v", titles, tc.violations)
			}
			if r.Summary.Violations != int64(len(r.Violations)) {
				t.Errorf("summary counts %d violations of %d", r.Summary.Violations, len(r.Violations))
			}
			if tc.dep == nil {
				if len(m.ReachableFrom) != 0 {
					t.Errorf("reachability of a router that is not installed: %v", m.ReachableFrom)
				}
				return
			}
			other, report := m.ReachableFrom["other_namespaces"], m.ReachableFrom["report_namespace"]
			if other.Verdict != tc.otherVerdict || report.Verdict != tc.reportVerdict {
				t.Errorf("other_namespaces %+v, report_namespace %+v; want %s, %s", other, report, tc.otherVerdict, tc.reportVerdict)
			}
			if other.Port != tc.port {
				t.Errorf("port %d, want %d", other.Port, tc.port)
			}
		})
	}
}

// TestRouterReachedThroughBothEnds: the sandboxes' own egress isolation
// keeps them from a router that would admit them.
func TestRouterReachedThroughBothEnds(t *testing.T) {
	inv := newInventory([]networkingv1.NetworkPolicy{isolation()}, hardenedSpec())
	inv.router = routerInventory{namespace: defaultRouterNamespace, deployment: routerDep("--authz-mode=allow-all")}
	m := analyze(inv, nil).Router
	if r := m.ReachableFrom["report_namespace"]; r.Verdict != verdictDenied || !strings.Contains(r.Reason, "egress") {
		t.Errorf("report_namespace %+v: the sandboxes' egress is isolated", r)
	}
	if !slices.Equal(m.Policies, []string{}) {
		t.Errorf("policies %v", m.Policies)
	}
}

// routerEgress is the router's egress to the sandbox pods of one
// namespace on 8888, as agentsandbox_sandbox_router renders
// sandbox_namespaces.
func routerEgress(sandboxNS string) networkingv1.NetworkPolicy {
	p := intstr.FromInt32(8888)
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "sandbox-router", Namespace: defaultRouterNamespace},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "sandbox-router"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{
				To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceNameLabel: sandboxNS}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: &p}},
			}},
		},
	}
}

// TestRouterToSandboxPath: from_sandbox_router is the path from the router
// of router_namespace, with its pods' labels, through its own egress and
// the sandbox's ingress; without a router, from where upstream's managed
// policy expects it, through the sandbox's ingress only.
func TestRouterToSandboxPath(t *testing.T) {
	other := func(dep *appsv1.Deployment, routerNS string) *appsv1.Deployment {
		dep.Namespace = routerNS
		return dep
	}
	relabelled := routerDep("--authz-mode=tokenreview")
	relabelled.Spec.Template.Labels = map[string]string{"app": "not-the-router"}
	for _, tc := range []struct {
		name     string
		routerNS string
		dep      *appsv1.Deployment
		pols     []networkingv1.NetworkPolicy
		want     string
		reason   string
	}{
		{name: "not installed, expected where the policy admits it", routerNS: defaultRouterNamespace, want: verdictAllowed, reason: "not installed"},
		{name: "not installed in another namespace", routerNS: "team-b", want: verdictDenied, reason: "not installed"},
		{name: "installed, egress to the sandboxes' namespace", routerNS: defaultRouterNamespace, dep: routerDep("--authz-mode=tokenreview"),
			pols: []networkingv1.NetworkPolicy{routerEgress(ns)}, want: verdictAllowed, reason: "allowed by the NetworkPolicies"},
		{name: "installed, egress to another namespace only", routerNS: defaultRouterNamespace, dep: routerDep("--authz-mode=tokenreview"),
			pols: []networkingv1.NetworkPolicy{routerEgress("team-b")}, want: verdictDenied, reason: "egress"},
		{name: "installed in a namespace the sandbox does not admit", routerNS: "team-b", dep: other(routerDep("--authz-mode=tokenreview"), "team-b"),
			want: verdictDenied, reason: "ingress"},
		{name: "installed without the label the sandbox admits", routerNS: defaultRouterNamespace, dep: relabelled, want: verdictDenied, reason: "ingress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := newInventory([]networkingv1.NetworkPolicy{isolation()}, hardenedSpec())
			inv.namespaces["team-b"] = map[string]string{namespaceNameLabel: "team-b"}
			inv.router = routerInventory{namespace: tc.routerNS, deployment: tc.dep, policies: tc.pols}
			r := analyze(inv, nil)
			got := r.Sandboxes[0].Network.Ingress["from_sandbox_router"]
			if got.Verdict != tc.want || !strings.Contains(got.Reason+" "+got.Address, tc.reason) || got.Port != 8888 {
				t.Errorf("from_sandbox_router = %+v, want %s (%s) on 8888", got, tc.want, tc.reason)
			}
			if !strings.Contains(got.Address, tc.routerNS) {
				t.Errorf("address %q does not name the router's namespace %s", got.Address, tc.routerNS)
			}
		})
	}
}
