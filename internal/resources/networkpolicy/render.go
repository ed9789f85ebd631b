package networkpolicy

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// spec renders p: the pods it selects, and the rules (netrules). It
// assumes p passed the schema's validation.
func (p policy) spec() networkingv1.NetworkPolicySpec {
	s := networkingv1.NetworkPolicySpec{
		// Always both: a policy that isolates only ingress would leave
		// egress open, and spelling them out keeps the server's defaulting
		// (Ingress, plus Egress only when there are egress rules) out of it.
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
	}
	if p.Template != "" {
		s.PodSelector = metav1.LabelSelector{MatchLabels: templateSelector(p.Template)}
	} else if p.PodSelector != nil {
		s.PodSelector = p.PodSelector.Render()
	}
	s.Ingress, s.Egress = p.Render()
	return s
}

// templateSelector selects the pods of every sandbox made from template:
// the agent-sandbox controller labels them (through the warm pool or the
// claim) with the FNV hash of the template's name, and its own managed
// policy selects them the same way.
func templateSelector(template string) map[string]string {
	return map[string]string{agentsv1beta1.SandboxTemplateRefHashLabel: sandboxapi.NameHash(template)}
}

// renderJSON is the `rendered` attribute: the canonical spec
// (netrules.SpecContent) as indented JSON with sorted keys, identical for a
// configuration and for the live object it produced.
func renderJSON(s networkingv1.NetworkPolicySpec) (string, error) {
	m, err := netrules.SpecContent(s)
	if err != nil {
		return "", err
	}
	return netrules.CanonicalJSON(m)
}

// liveSpec reads the spec of a NetworkPolicy as the API server returned it,
// through the typed struct so that it is normalised exactly like a rendered
// one (absent and empty lists alike, integers as integers).
func liveSpec(content map[string]any) (networkingv1.NetworkPolicySpec, error) {
	var s networkingv1.NetworkPolicySpec
	raw, _ := content["spec"].(map[string]any)
	if raw == nil {
		return s, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &s); err != nil {
		return s, fmt.Errorf("reading the NetworkPolicy spec: %w", err)
	}
	return s, nil
}
