package isolationreport

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

const ns = "agents"

var componentLabels = map[string]string{"app.kubernetes.io/component": "execution-sandbox"}

// hardenedSpec is what the provider's hardened defaults give a pod.
func hardenedSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RuntimeClassName:             ptr.To("gvisor"),
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:  "agent",
			Image: "python",
			Ports: []corev1.ContainerPort{{ContainerPort: 8888, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
			}},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

// sandboxOf is a pool member of template "python" with its running pod.
func sandboxOf(name string, spec corev1.PodSpec) (agentsv1beta1.Sandbox, *corev1.Pod) {
	uid := types.UID("uid-" + name)
	lbls := map[string]string{}
	for k, v := range componentLabels {
		lbls[k] = v
	}
	sb := agentsv1beta1.Sandbox{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: uid,
			Annotations:     map[string]string{agentsv1beta1.SandboxTemplateRefAnnotation: "python"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "SandboxWarmPool", Name: "python-pool", Controller: ptr.To(true)}},
		},
		Spec: agentsv1beta1.SandboxSpec{SandboxBlueprint: agentsv1beta1.SandboxBlueprint{PodTemplate: agentsv1beta1.PodTemplate{
			ObjectMeta: agentsv1beta1.PodMetadata{Labels: lbls}, Spec: spec,
		}}},
	}
	podLabels := map[string]string{agentsv1beta1.SandboxTemplateRefHashLabel: sandboxapi.NameHash("python")}
	for k, v := range lbls {
		podLabels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: podLabels,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Sandbox", Name: name, UID: uid, Controller: ptr.To(true)}}},
		Spec:   *spec.DeepCopy(),
		Status: corev1.PodStatus{PodIP: "10.0.0." + fmt.Sprint(len(name))},
	}
	pod.Spec.NodeName = "gvisor-pool-0"
	return sb, pod
}

// isolation is the quickstart's policy: every execution sandbox, ingress
// from the router on 8888, no egress.
func isolation() networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "isolate", Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: componentLabels},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceNameLabel: "agent-sandbox-system"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sandbox-router"}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(8888))}},
			}},
		},
	}
}

func egressTo(name, cidr string, except ...string) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: componentLabels},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{
				IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except},
			}}}},
		},
	}
}

func newInventory(policies []networkingv1.NetworkPolicy, specs ...corev1.PodSpec) inventory {
	inv := inventory{
		namespace: ns,
		namespaces: map[string]map[string]string{
			ns: {namespaceNameLabel: ns}, "kube-system": {namespaceNameLabel: "kube-system"},
			"agent-sandbox-system": {namespaceNameLabel: "agent-sandbox-system"}, "default": {namespaceNameLabel: "default"},
		},
		namespacesListed: true,
		pods:             map[string]*corev1.Pod{},
		policies:         policies,
		runtimeClasses:   map[string]string{"gvisor": "runsc", "runc": "runc"},
		serviceAccounts:  map[string]*corev1.ServiceAccount{"default": {}},
		apiService:       netip.MustParseAddrPort("10.96.0.1:443"),
		apiEndpoints:     []netip.AddrPort{netip.MustParseAddrPort("192.168.10.2:6443")},
		permissions:      map[string][]string{},
	}
	for i, spec := range specs {
		sb, pod := sandboxOf(fmt.Sprintf("python-pool-%c", 'a'+i), spec)
		inv.sandboxes = append(inv.sandboxes, sb)
		inv.pods[pod.Name] = pod
	}
	return inv
}

func titles(s sandboxModel) []string {
	var out []string
	for _, v := range s.Violations {
		out = append(out, v.Title+" @ "+v.Attribute)
	}
	return out
}

// TestHardenedIsClean: the provider's hardened sandbox under the
// quickstart's policy has no violation, and its verdicts say why.
func TestHardenedIsClean(t *testing.T) {
	r := analyze(newInventory([]networkingv1.NetworkPolicy{isolation()}, hardenedSpec(), hardenedSpec()), nil)
	if len(r.Violations) != 0 {
		t.Fatalf("violations of the hardened sandbox: %v", r.Violations)
	}
	if want := (summaryModel{Sandboxes: 2, Pods: 2, Clean: 2, GVisor: 2, IngressIsolated: 2, EgressIsolated: 2}); r.Summary != want {
		t.Errorf("summary %+v, want %+v", r.Summary, want)
	}
	s := r.Sandboxes[0]
	if s.Origin != "warm_pool" || s.Owner != "python-pool" || s.Template != "python" || s.Pod != "python-pool-a" {
		t.Errorf("origin %q owner %q template %q pod %q", s.Origin, s.Owner, s.Template, s.Pod)
	}
	if s.Runtime != (runtimeModel{RuntimeClassName: "gvisor", Handler: "runsc", GVisor: true, Isolation: isolationGVisor, Node: "gvisor-pool-0"}) {
		t.Errorf("runtime %+v", s.Runtime)
	}
	if s.Identity.TokenMounted || s.Identity.ServiceAccount != "default" {
		t.Errorf("identity %+v", s.Identity)
	}
	p := s.Process
	if !p.RunAsNonRoot || p.Privileged || p.PrivilegeEscalation || !p.AllCapabilitiesDropped || p.Seccomp != "RuntimeDefault" || len(p.ContainersWithoutLimits) > 0 {
		t.Errorf("process %+v", p)
	}
	want := map[string]string{
		"metadata_server_ipv4": verdictDenied, "metadata_server_ipv6": verdictDenied, "metadata_server_ipv6_gce": verdictDenied,
		"kubernetes_api_service": verdictDenied, "kubernetes_api_endpoints": verdictDenied, "cluster_dns": verdictDenied,
		"internet_ipv4": verdictDenied, "internet_ipv6": verdictDenied, "other_namespaces": verdictDenied, "same_template": verdictDenied,
	}
	for k, v := range want {
		if got := s.Network.Egress[k]; got.Verdict != v {
			t.Errorf("egress %s: %+v, want %s", k, got, v)
		}
	}
	if len(s.Network.Egress) != len(want) {
		t.Errorf("egress keys %d, want %d", len(s.Network.Egress), len(want))
	}
	wantIn := map[string]string{
		"from_sandbox_router": verdictAllowed, "from_other_namespaces": verdictAllowed, // the router's namespace is another one
		"from_same_namespace": verdictDenied, "from_internet": verdictDenied, "from_same_template": verdictDenied,
	}
	for k, v := range wantIn {
		if got := s.Network.Ingress[k]; got.Verdict != v {
			t.Errorf("ingress %s: %+v, want %s", k, got, v)
		}
	}
	if r := s.Network.Ingress["from_sandbox_router"]; !slices.Equal(r.AllowedBy, []string{"isolate"}) || r.Port != 8888 {
		t.Errorf("router verdict %+v", r)
	}
	if r := s.Network.Egress["metadata_server_ipv4"]; !strings.Contains(r.Reason, "isolate") {
		t.Errorf("the denial does not name the policy: %+v", r)
	}
}

// TestLoosenedIsFlagged: every way the hardening warns about, seen in the
// running pod, is a violation with the same title and the attribute it
// comes from.
func TestLoosenedIsFlagged(t *testing.T) {
	c0 := "pod_template.containers[0]"
	edit := func(f func(*corev1.PodSpec)) corev1.PodSpec {
		s := hardenedSpec()
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want []string
	}{
		{"no runtime class", edit(func(s *corev1.PodSpec) { s.RuntimeClassName = nil }),
			[]string{"Sandbox runs without gVisor @ pod_template.runtime_class_name"}},
		{"runc runtime class", edit(func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("runc") }),
			[]string{"Sandbox runs without gVisor @ pod_template.runtime_class_name"}},
		{"missing runtime class", edit(func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("kata") }),
			[]string{"RuntimeClass does not exist @ pod_template.runtime_class_name"}},
		{"token mounted", edit(func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = ptr.To(true) }),
			[]string{"Service account token mounted into the sandbox @ pod_template.automount_service_account_token"}},
		{"may run as root", edit(func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = ptr.To(false) }),
			[]string{"Sandbox may run as root @ pod_template.security_context.run_as_non_root"}},
		{"runs as root", edit(func(s *corev1.PodSpec) {
			s.SecurityContext.RunAsNonRoot = ptr.To(false)
			s.Containers[0].SecurityContext.RunAsUser = ptr.To[int64](0)
		}), []string{"Sandbox runs as root @ " + c0 + ".security_context.run_as_user"}},
		{"pod seccomp unconfined", edit(func(s *corev1.PodSpec) {
			s.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		}), []string{"Sandbox runs without a syscall filter @ pod_template.security_context.seccomp_profile.type"}},
		{"container seccomp unconfined", edit(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}), []string{"Sandbox runs without a syscall filter @ " + c0 + ".security_context.seccomp_profile.type"}},
		{"privileged", edit(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Privileged = ptr.To(true)
			s.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		}), []string{"Privileged sandbox container @ " + c0 + ".security_context.privileged",
			"Privilege escalation allowed @ " + c0 + ".security_context.allow_privilege_escalation"}},
		{"privilege escalation", edit(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true) }),
			[]string{"Privilege escalation allowed @ " + c0 + ".security_context.allow_privilege_escalation"}},
		{"capabilities added", edit(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
		}),
			[]string{"Capabilities added @ " + c0 + ".security_context.capabilities.add"}},
		{"nothing dropped", edit(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities.Drop = nil }),
			[]string{"Not all capabilities dropped @ " + c0 + ".security_context.capabilities.drop"}},
		{"container may run as root", edit(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.RunAsNonRoot = ptr.To(false) }),
			[]string{"Sandbox container may run as root @ " + c0 + ".security_context.run_as_non_root"}},
		{"host network", edit(func(s *corev1.PodSpec) { s.HostNetwork = true }),
			[]string{"Sandbox shares a host namespace @ pod_template.pod_spec_overrides",
				"Metadata server reachable @ network.egress.metadata_server_ipv4",
				"Metadata server reachable @ network.egress.metadata_server_ipv6",
				"Metadata server reachable @ network.egress.metadata_server_ipv6_gce",
				"Kubernetes API reachable @ network.egress.kubernetes_api_service",
				"Kubernetes API reachable @ network.egress.kubernetes_api_endpoints",
				"Sandboxes of the same template can reach each other @ network.egress.same_template"}},
		{"host PID and IPC", edit(func(s *corev1.PodSpec) { s.HostPID, s.HostIPC = true, true }),
			[]string{"Sandbox shares a host namespace @ pod_template.pod_spec_overrides", "Sandbox shares a host namespace @ pod_template.pod_spec_overrides"}},
		{"hostPath", edit(func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}), []string{"Host directory mounted into the sandbox @ pod_template.pod_spec_overrides"}},
		{"AppArmor unconfined", edit(func(s *corev1.PodSpec) {
			s.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}), []string{"Sandbox runs without AppArmor @ pod_template.pod_spec_overrides"}},
		{"unmasked proc", edit(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.ProcMount = ptr.To(corev1.UnmaskedProcMount) }),
			[]string{"Unmasked /proc @ pod_template.pod_spec_overrides"}},
		{"no limits", edit(func(s *corev1.PodSpec) { delete(s.Containers[0].Resources.Limits, corev1.ResourceMemory) }),
			[]string{"Missing resource limits @ " + c0 + ".resources.limits"}},
		{"init container loosened", edit(func(s *corev1.PodSpec) {
			c := s.Containers[0]
			c.Name = "setup"
			c.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
			s.InitContainers = []corev1.Container{c}
		}), []string{"Privilege escalation allowed @ pod_template.init_containers[0].security_context.allow_privilege_escalation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyze(newInventory([]networkingv1.NetworkPolicy{isolation()}, tc.spec), nil)
			if got := titles(r.Sandboxes[0]); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("violations\n got %q\nwant %q", got, tc.want)
			}
			if len(r.Violations) != len(tc.want) || r.Summary.Violations != int64(len(tc.want)) || r.Summary.Clean != 0 {
				t.Errorf("top-level %d violations, summary %+v", len(r.Violations), r.Summary)
			}
			for _, v := range r.Violations {
				if v.Sandbox != ns+"/python-pool-a" || v.Message == "" {
					t.Errorf("violation %+v", v)
				}
			}
		})
	}
}

// TestTitlesMatchTheHardeningWarnings: a violation the pod-template
// hardening also warns about carries the warning's title, so a user sees
// the same words at plan time and in the report.
func TestTitlesMatchTheHardeningWarnings(t *testing.T) {
	src, err := os.ReadFile("../../podtemplate/validate.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{
		"Sandbox runs without gVisor", "Service account token mounted into the sandbox", "Sandbox may run as root",
		"Sandbox runs as root", "Sandbox runs without a syscall filter", "Privileged sandbox container",
		"Privilege escalation allowed", "Capabilities added", "Not all capabilities dropped",
		"Sandbox container may run as root", "Sandbox shares a host namespace", "Host directory mounted into the sandbox",
		"Sandbox runs without AppArmor", "Unmasked /proc",
	} {
		if !strings.Contains(string(src), `"`+title+`"`) {
			t.Errorf("podtemplate's warnings have no title %q any more", title)
		}
	}
}

// TestNetworkFindings: no policy at all, and policies that leave the
// metadata server reachable through a wide range.
func TestNetworkFindings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policies  []networkingv1.NetworkPolicy
		want      []string
		allowedBy []string
	}{
		{"no policy", nil, []string{
			"No NetworkPolicy isolates the sandbox's ingress @ network.ingress_isolated",
			"No NetworkPolicy isolates the sandbox's egress @ network.egress_isolated",
			"Metadata server reachable @ network.egress.metadata_server_ipv4",
			"Metadata server reachable @ network.egress.metadata_server_ipv6",
			"Metadata server reachable @ network.egress.metadata_server_ipv6_gce",
			"Kubernetes API reachable @ network.egress.kubernetes_api_service",
			"Kubernetes API reachable @ network.egress.kubernetes_api_endpoints",
			"Sandboxes of the same template can reach each other @ network.egress.same_template",
		}, []string{}},
		{"0.0.0.0/0 without except", []networkingv1.NetworkPolicy{isolation(), egressTo("wide", "0.0.0.0/0")}, []string{
			"Metadata server reachable @ network.egress.metadata_server_ipv4",
			"Kubernetes API reachable @ network.egress.kubernetes_api_service",
			"Kubernetes API reachable @ network.egress.kubernetes_api_endpoints",
		}, []string{"wide"}},
		{"169.254.0.0/16", []networkingv1.NetworkPolicy{isolation(), egressTo("link-local", "169.254.0.0/16")}, []string{
			"Metadata server reachable @ network.egress.metadata_server_ipv4",
		}, []string{"link-local"}},
		{"0.0.0.0/0 except the metadata server", []networkingv1.NetworkPolicy{isolation(), egressTo("carved", "0.0.0.0/0", "169.254.169.254/32", "10.0.0.0/8", "192.168.0.0/16")},
			nil, nil},
		{"IPv6 everything", []networkingv1.NetworkPolicy{isolation(), egressTo("v6", "::/0")}, []string{
			"Metadata server reachable @ network.egress.metadata_server_ipv6",
			"Metadata server reachable @ network.egress.metadata_server_ipv6_gce",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyze(newInventory(tc.policies, hardenedSpec(), hardenedSpec()), nil)
			s := r.Sandboxes[0]
			if got := titles(s); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("violations\n got %q\nwant %q", got, tc.want)
			}
			if tc.allowedBy != nil {
				m := s.Network.Egress["metadata_server_ipv4"]
				if m.Verdict != verdictAllowed || !slices.Equal(m.AllowedBy, tc.allowedBy) {
					t.Errorf("metadata verdict %+v, want allowed by %v", m, tc.allowedBy)
				}
				for _, v := range s.Violations {
					if v.Title == "Metadata server reachable" && v.Attribute == "network.egress.metadata_server_ipv4" && len(tc.allowedBy) > 0 &&
						!strings.Contains(v.Message, tc.allowedBy[0]) {
						t.Errorf("the message does not name the policy %q: %s", tc.allowedBy[0], v.Message)
					}
				}
			}
		})
	}
}

// TestIdentity: the token as the pod has it, and the account's power.
func TestIdentity(t *testing.T) {
	tokenVolume := func(s *corev1.PodSpec) {
		s.AutomountServiceAccountToken = nil
		s.ServiceAccountName = "builder"
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "kube-api-access-x1", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}},
		}}})
		s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access-x1", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	}
	spec := hardenedSpec()
	tokenVolume(&spec)
	inv := newInventory([]networkingv1.NetworkPolicy{isolation()}, spec)
	inv.permissions["builder"] = []string{"get secrets", "create pods"}
	s := analyze(inv, nil).Sandboxes[0]
	if !s.Identity.TokenMounted || s.Identity.ServiceAccount != "builder" || !slices.Equal(s.Identity.Permissions, []string{"get secrets", "create pods"}) {
		t.Errorf("identity %+v", s.Identity)
	}
	want := []string{
		"Service account token mounted into the sandbox @ pod_template.automount_service_account_token",
		"Sandbox's service account is powerful @ pod_template.service_account_name",
	}
	if got := titles(s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("violations %q, want %q", got, want)
	}
	if !strings.Contains(s.Violations[1].Message, "get secrets, create pods") {
		t.Errorf("message does not list the permissions: %s", s.Violations[1].Message)
	}

	// Admitted with automount on but no token volume mounted: not mounted.
	spec = hardenedSpec()
	tokenVolume(&spec)
	spec.Containers[0].VolumeMounts = nil
	if s := analyze(newInventory(nil, spec), nil).Sandboxes[0]; s.Identity.TokenMounted {
		t.Errorf("a token volume nobody mounts counts as mounted")
	}
	// Not admitted yet (no pod): the account's automount decides.
	spec = hardenedSpec()
	spec.AutomountServiceAccountToken = nil
	inv = newInventory(nil, spec)
	inv.pods = map[string]*corev1.Pod{}
	inv.serviceAccounts["default"] = &corev1.ServiceAccount{AutomountServiceAccountToken: ptr.To(false)}
	if s := analyze(inv, nil).Sandboxes[0]; s.Identity.TokenMounted || s.Pod != "" {
		t.Errorf("account with automount false: %+v (pod %q)", s.Identity, s.Pod)
	}
	inv.serviceAccounts["default"] = &corev1.ServiceAccount{}
	if s := analyze(inv, nil).Sandboxes[0]; !s.Identity.TokenMounted {
		t.Errorf("automount unset everywhere means mounted")
	}
}

// TestSelectorAndOrigin: the selector matches pod-template labels; origins
// are told apart by the controlling owner.
func TestSelectorAndOrigin(t *testing.T) {
	inv := newInventory([]networkingv1.NetworkPolicy{isolation()}, hardenedSpec(), hardenedSpec(), hardenedSpec())
	inv.sandboxes[1].OwnerReferences = []metav1.OwnerReference{{Kind: "SandboxClaim", Name: "session-1", Controller: ptr.To(true)}}
	inv.sandboxes[2].OwnerReferences = nil
	inv.sandboxes[2].Spec.PodTemplate.ObjectMeta.Labels = map[string]string{"tier": "other"}
	r := analyze(inv, nil)
	var got []string
	for _, s := range r.Sandboxes {
		got = append(got, s.Origin+":"+s.Owner)
	}
	if want := []string{"warm_pool:python-pool", "claim:session-1", "sandbox:"}; !slices.Equal(got, want) {
		t.Errorf("origins %v, want %v", got, want)
	}
	sel, _ := labels.Parse("app.kubernetes.io/component=execution-sandbox")
	if r := analyze(inv, sel); len(r.Sandboxes) != 2 || r.Summary.Sandboxes != 2 {
		t.Errorf("selector kept %d sandboxes", len(r.Sandboxes))
	}
}

// TestDNSAndProbes: cluster DNS and extra destinations and sources.
func TestDNSAndProbes(t *testing.T) {
	allowDNS := networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: componentLabels},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{
				To: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceNameLabel: "kube-system"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(53))}},
			}},
		},
	}
	inv := newInventory([]networkingv1.NetworkPolicy{isolation(), allowDNS}, hardenedSpec())
	inv.destinations = []probe{
		{Name: "allowed_dns_tcp", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}, Port: 53, Protocol: corev1.ProtocolTCP},
		{Name: "allowed_dns_udp", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}, Port: 53, Protocol: corev1.ProtocolUDP},
		{Name: "public", Address: netip.MustParseAddr("203.0.113.10"), Port: 80, Protocol: corev1.ProtocolTCP},
	}
	inv.sources = []probe{
		{Name: "impostor", Namespace: ns, Labels: map[string]string{"app": "sandbox-router"}, Port: 8888, Protocol: corev1.ProtocolTCP},
		{Name: "router_9999", Namespace: "agent-sandbox-system", Labels: map[string]string{"app": "sandbox-router"}, Port: 9999, Protocol: corev1.ProtocolTCP},
		{Name: "router", Namespace: "agent-sandbox-system", Labels: map[string]string{"app": "sandbox-router"}, Port: 8888, Protocol: corev1.ProtocolTCP},
	}
	s := analyze(inv, nil).Sandboxes[0]
	for k, want := range map[string]string{"cluster_dns": verdictAllowed, "allowed_dns_udp": verdictAllowed, "allowed_dns_tcp": verdictDenied, "public": verdictDenied, "other_namespaces": verdictDenied} {
		if got := s.Network.Egress[k]; got.Verdict != want {
			t.Errorf("egress %s: %+v, want %s", k, got, want)
		}
	}
	for k, want := range map[string]string{"impostor": verdictDenied, "router_9999": verdictDenied, "router": verdictAllowed} {
		if got := s.Network.Ingress[k]; got.Verdict != want {
			t.Errorf("ingress %s: %+v, want %s", k, got, want)
		}
	}
	if len(s.Violations) != 0 {
		t.Errorf("violations: %v", titles(s))
	}

	// dnsPolicy None: the pod's own nameservers decide.
	spec := hardenedSpec()
	spec.DNSPolicy = corev1.DNSNone
	spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}}
	inv = newInventory([]networkingv1.NetworkPolicy{isolation(), allowDNS, egressTo("google", "8.8.8.8/32")}, spec)
	if got := analyze(inv, nil).Sandboxes[0].Network.Egress["cluster_dns"]; got.Verdict != verdictAllowed || !slices.Equal(got.AllowedBy, []string{"google"}) {
		t.Errorf("dnsPolicy None: %+v", got)
	}
}

// TestUnknownAPIEndpoints: no EndpointSlice (a cluster that publishes none,
// or a user who may not read them) is "unknown", not a verdict.
func TestUnknownAPIEndpoints(t *testing.T) {
	inv := newInventory([]networkingv1.NetworkPolicy{isolation()}, hardenedSpec())
	inv.apiEndpoints = nil
	inv.apiService = netip.AddrPort{}
	s := analyze(inv, nil).Sandboxes[0]
	for _, k := range []string{"kubernetes_api_service", "kubernetes_api_endpoints"} {
		if got := s.Network.Egress[k]; got.Verdict != verdictUnknown {
			t.Errorf("%s: %+v", k, got)
		}
	}
}

type fakeSARs struct {
	allowed map[string]bool // "<user> <verb> <resource>/<sub> <ns>"
	calls   int
	err     error
}

func (f *fakeSARs) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	a := sar.Spec.ResourceAttributes
	key := fmt.Sprintf("%s %s %s/%s %s", sar.Spec.User, a.Verb, a.Resource, a.Subresource, a.Namespace)
	sar.Status.Allowed = f.allowed[key]
	return sar, nil
}

// TestReviewAccounts: four reviews per account in use (not per sandbox),
// and a refusal is a warning that leaves permissions empty.
func TestReviewAccounts(t *testing.T) {
	spec := hardenedSpec()
	spec.ServiceAccountName = "builder"
	inv := newInventory(nil, hardenedSpec(), hardenedSpec(), spec)
	f := &fakeSARs{allowed: map[string]bool{
		"system:serviceaccount:agents:builder get secrets/ agents":     true,
		"system:serviceaccount:agents:builder * */ ":                   true,
		"system:serviceaccount:agents:default create pods/exec agents": false,
	}}
	if diags := reviewAccounts(context.Background(), f, &inv); diags.HasError() || len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if f.calls != 2*len(dangerousActions) {
		t.Errorf("%d reviews for 2 accounts, want %d", f.calls, 2*len(dangerousActions))
	}
	if got := inv.permissions["builder"]; !slices.Equal(got, []string{"get secrets", "* * cluster-wide"}) {
		t.Errorf("builder may %v", got)
	}
	if got := inv.permissions["default"]; len(got) != 0 {
		t.Errorf("default may %v", got)
	}
	inv.permissions = map[string][]string{}
	diags := reviewAccounts(context.Background(), &fakeSARs{err: errors.New("forbidden")}, &inv)
	if len(diags) != 1 || diags.HasError() || !strings.Contains(diags[0].Detail(), "proves nothing") {
		t.Errorf("refused review: %v", diags)
	}
}

// TestDeclaredIsolatingRuntimeClass: a RuntimeClass whose handler the report
// cannot recognise (as for GKE's MicroVM pools, whose RuntimeClass GKE does
// not document) is a violation unless isolating_runtime_classes declares it;
// then the pod is reported isolated by declaration, counted apart from
// gVisor, and nothing else about it changes. A declaration does not make a
// missing RuntimeClass exist, and a plain runtime not declared still warns.
func TestDeclaredIsolatingRuntimeClass(t *testing.T) {
	microVM := hardenedSpec()
	microVM.RuntimeClassName = ptr.To("microvm")
	plain := hardenedSpec()
	plain.RuntimeClassName = ptr.To("runc")
	missing := hardenedSpec()
	missing.RuntimeClassName = ptr.To("kata")
	inv := newInventory([]networkingv1.NetworkPolicy{isolation()}, microVM, plain, missing, hardenedSpec())
	inv.runtimeClasses["microvm"] = "some-vm-shim"

	undeclared := analyze(inv, nil)
	if got := titles(undeclared.Sandboxes[0]); !slices.Contains(got, "Sandbox runs without gVisor @ pod_template.runtime_class_name") {
		t.Errorf("undeclared MicroVM RuntimeClass: violations %v, want Sandbox runs without gVisor", got)
	}

	inv.declared = map[string]bool{"microvm": true, "kata": true}
	r := analyze(inv, nil)
	byName := map[string]sandboxModel{}
	for _, s := range r.Sandboxes {
		byName[s.Runtime.RuntimeClassName] = s
	}
	if s := byName["microvm"]; s.Runtime != (runtimeModel{RuntimeClassName: "microvm", Handler: "some-vm-shim", Isolation: isolationDeclared, Node: "gvisor-pool-0"}) || len(s.Violations) != 0 {
		t.Errorf("declared MicroVM RuntimeClass: runtime %+v violations %v, want isolation declared and none", s.Runtime, titles(s))
	}
	if got := titles(byName["runc"]); !slices.Contains(got, "Sandbox runs without gVisor @ pod_template.runtime_class_name") {
		t.Errorf("plain runtime: violations %v, want Sandbox runs without gVisor", got)
	}
	if got := titles(byName["kata"]); !slices.Contains(got, "RuntimeClass does not exist @ pod_template.runtime_class_name") || byName["kata"].Runtime.Isolation != "" {
		t.Errorf("declared but missing RuntimeClass: violations %v isolation %q", got, byName["kata"].Runtime.Isolation)
	}
	if r.Summary.GVisor != 1 || r.Summary.Declared != 1 || r.Summary.Clean != 2 {
		t.Errorf("summary %+v, want gvisor 1, declared_isolating 1, clean 2", r.Summary)
	}

	// The RuntimeClasses could not be read: a declared one is still taken
	// on the configuration's word, an undeclared one still warns.
	inv.runtimeClasses = nil
	r = analyze(inv, nil)
	for _, s := range r.Sandboxes {
		if s.Runtime.RuntimeClassName == "microvm" && (s.Runtime.Isolation != isolationDeclared || len(s.Violations) != 0) {
			t.Errorf("declared RuntimeClass, classes unreadable: %+v %v", s.Runtime, titles(s))
		}
		if s.Runtime.RuntimeClassName == "runc" && !slices.Contains(titles(s), "Sandbox runs without gVisor @ pod_template.runtime_class_name") {
			t.Errorf("plain runtime, classes unreadable: %v", titles(s))
		}
	}
}
