package networkpolicy

import (
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
)

// decode reads a live NetworkPolicy spec back into the attributes that
// render it, for import. For a policy this resource wrote, the result is
// the canonical configuration: decode(p.spec()) == p whenever p uses the
// defaults where a default would do (see the round-trip test). The rules
// are decoded by netrules.Decode, which takes in what the attributes can
// express and refuses the rest with the reason.
//
// templateFor maps the value of the template-ref-hash label back to a
// SandboxTemplate name ("" when none is known): the label holds only a hash.
func decode(s networkingv1.NetworkPolicySpec, templateFor func(hash string) string) (policy, error) {
	var p policy
	if !slices.Contains(s.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(s.PolicyTypes, networkingv1.PolicyTypeEgress) {
		return p, fmt.Errorf("its policyTypes are %v, so it does not isolate both directions; "+
			"agentsandbox_network_policy always isolates ingress and egress, and managing this policy would change what "+
			"the cluster enforces", s.PolicyTypes)
	}

	if hash, ok := templateHash(s.PodSelector); ok && templateFor != nil {
		p.Template = templateFor(hash)
	}
	if p.Template == "" {
		p.PodSelector = netrules.DecodeSelector(s.PodSelector)
	}
	rules, err := netrules.Decode(s.Ingress, s.Egress)
	p.Intent = rules
	return p, err
}

// templateHash reports the template-ref-hash value when sel is exactly what
// the template shortcut renders.
func templateHash(sel metav1.LabelSelector) (string, bool) {
	if len(sel.MatchLabels) != 1 || len(sel.MatchExpressions) != 0 {
		return "", false
	}
	h, ok := sel.MatchLabels[agentsv1beta1.SandboxTemplateRefHashLabel]
	return h, ok
}
