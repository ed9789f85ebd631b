package blueprint

import (
	"testing"

	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// TestContentOmitsEmptyMetadata: upstream's types encode an empty
// podTemplate.metadata; what is sent leaves it out, as the project's own
// types did, while labels are kept.
func TestContentOmitsEmptyMetadata(t *testing.T) {
	for _, spec := range []any{agentsv1beta1.SandboxSpec{}, extv1beta1.SandboxTemplateSpec{}} {
		m, err := Content(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, found := m["podTemplate"].(map[string]any)["metadata"]; found {
			t.Errorf("%T: podTemplate.metadata sent empty: %v", spec, m)
		}
	}
	s := agentsv1beta1.SandboxSpec{}
	s.PodTemplate.ObjectMeta.Labels = map[string]string{"app": "a"}
	m, err := Content(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, found := m["podTemplate"].(map[string]any)["metadata"]; !found {
		t.Errorf("podTemplate.metadata with labels was dropped: %v", m)
	}
}
