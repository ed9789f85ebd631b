package object_test

import (
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// TestImportOfAnotherObjectIsRefused: an import block whose ID names
// another object than the configuration used to plan "import, then
// replace", and the apply deleted the imported object (issue 13). The plan
// now fails on the attribute that differs, naming both objects; an ID that
// matches plans normally. Nothing is sent to the cluster.
func TestImportOfAnotherObjectIsRefused(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	sb := map[string]any{
		"name": "agent", "namespace": "agents",
		"pod_template": map[string]any{"containers": []any{map[string]any{
			"name": "python", "image": "python:3.13",
			"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
		}}},
	}
	pool := map[string]any{"name": "python-pool", "namespace": "agents", "template": "python"}
	before := kube.RequestCount()
	for _, tc := range []struct {
		typ, id string
		cfg     map[string]any
		path    string // "" when the import is accepted
		words   []string
	}{
		{sandbox.ResourceType, "agents/someone-else", sb, "name", []string{`"agents/someone-else"`, "agents/agent", "deleting", `use the import ID "agents/agent"`}},
		{sandbox.ResourceType, "agent", sb, "namespace", []string{`"default/agent"`, "agents/agent", "deleting"}},
		{sandbox.ResourceType, "agents/agent", sb, "", nil},
		{warmpool.ResourceType, "agents/other-pool", pool, "name", []string{"other-pool", "agents/python-pool"}},
		{warmpool.ResourceType, "agents/python-pool", pool, "", nil},
	} {
		t.Run(tc.typ+" "+tc.id, func(t *testing.T) {
			diags := s.ImportThenPlan(t, tc.typ, tc.id, tc.cfg)
			if tc.path == "" {
				if errs := pt.Errors(diags); len(errs) > 0 {
					t.Fatal(pt.Describe(errs))
				}
				return
			}
			pt.ExpectErrorAt(t, diags, tc.path, tc.words...)
		})
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("%d requests", n)
	}
}
