package sandboxsim

import (
	"fmt"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

func newTemplate(ns, name string) *extv1beta1.SandboxTemplate {
	return &extv1beta1.SandboxTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: extv1beta1.SandboxTemplateSpec{SandboxBlueprint: agentsv1beta1.SandboxBlueprint{
			PodTemplate: agentsv1beta1.PodTemplate{Spec: testPodSpec()},
		}},
	}
}

func TestTemplate_NetworkPolicy(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	npName := sandboxapi.TemplateNetworkPolicyName("tpl")

	tmpl := newTemplate(ns, "tpl")
	e.create(t, tmpl)

	np := &networkingv1.NetworkPolicy{}
	eventually(t, shortWait, "managed NetworkPolicy created", func() (bool, string) { return e.get(t, ns, npName, np), "not found" })
	e.get(t, ns, "tpl", tmpl)
	if !metav1.IsControlledBy(np, tmpl) {
		t.Errorf("policy not controlled by the template: %v", np.OwnerReferences)
	}
	if got := tmpl.Labels[sandboxapi.LabelSandboxTemplateRefHash]; got != sandboxapi.NameHash("tpl") {
		t.Errorf("template ref-hash label = %q", got)
	}
	if sel := np.Spec.PodSelector.MatchLabels; len(sel) != 1 || sel[sandboxapi.LabelSandboxTemplateRefHash] != sandboxapi.NameHash("tpl") {
		t.Errorf("pod selector = %v", np.Spec.PodSelector)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("policy types = %v", np.Spec.PolicyTypes)
	}
	// Upstream's secure default: only the router may connect in; out, only
	// public addresses.
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 {
		t.Fatalf("ingress = %+v", np.Spec.Ingress)
	}
	from := np.Spec.Ingress[0].From[0]
	if from.NamespaceSelector == nil || from.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "agent-sandbox-system" ||
		from.PodSelector == nil || from.PodSelector.MatchLabels["app"] != "sandbox-router" {
		t.Errorf("ingress peer = %+v", from)
	}
	if len(np.Spec.Egress) != 1 || len(np.Spec.Egress[0].To) != 2 {
		t.Fatalf("egress = %+v", np.Spec.Egress)
	}
	v4, v6 := np.Spec.Egress[0].To[0].IPBlock, np.Spec.Egress[0].To[1].IPBlock
	if v4 == nil || v4.CIDR != "0.0.0.0/0" || !slices.Equal(v4.Except, []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}) {
		t.Errorf("IPv4 egress block = %+v", v4)
	}
	if v6 == nil || v6.CIDR != "::/0" || !slices.Equal(v6.Except, []string{"fc00::/7", "fe80::/10"}) {
		t.Errorf("IPv6 egress block = %+v", v6)
	}

	t.Run("custom rules replace the default", func(t *testing.T) {
		e.update(t, tmpl, func() {
			tmpl.Spec.NetworkPolicy = &extv1beta1.NetworkPolicySpec{
				Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "1.1.1.1/32"}}}}},
			}
		})
		eventually(t, shortWait, "policy updated", func() (bool, string) {
			e.get(t, ns, npName, np)
			ok := len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 1 && len(np.Spec.Egress[0].To) == 1 &&
				np.Spec.Egress[0].To[0].IPBlock != nil && np.Spec.Egress[0].To[0].IPBlock.CIDR == "1.1.1.1/32" &&
				len(np.Spec.PolicyTypes) == 2
			return ok, fmt.Sprintf("spec %+v", np.Spec)
		})
	})

	t.Run("unmanaged deletes it", func(t *testing.T) {
		e.update(t, tmpl, func() { tmpl.Spec.NetworkPolicyManagement = extv1beta1.NetworkPolicyUnmanaged })
		eventually(t, shortWait, "policy deleted", func() (bool, string) {
			return e.gone(t, ns, npName, &networkingv1.NetworkPolicy{}), "still there"
		})
	})

	t.Run("managed again recreates it", func(t *testing.T) {
		e.update(t, tmpl, func() {
			tmpl.Spec.NetworkPolicyManagement = extv1beta1.NetworkPolicyManaged
			tmpl.Spec.NetworkPolicy = nil
		})
		eventually(t, shortWait, "policy recreated with the default rules", func() (bool, string) {
			if e.gone(t, ns, npName, np) {
				return false, "not found"
			}
			return len(np.Spec.Ingress) == 1 && len(np.Spec.Egress) == 1, fmt.Sprintf("spec %+v", np.Spec)
		})
	})
}
