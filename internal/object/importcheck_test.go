package object_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"

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

// fakeProvider serves the real sandbox resource with clients on a fake
// dynamic client holding objs.
type fakeProvider struct{ meta *conn.Meta }

func (p fakeProvider) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = "agentsandbox"
}
func (p fakeProvider) Schema(context.Context, fwprovider.SchemaRequest, *fwprovider.SchemaResponse) {}
func (p fakeProvider) Configure(_ context.Context, _ fwprovider.ConfigureRequest, resp *fwprovider.ConfigureResponse) {
	resp.ResourceData = p.meta
}
func (p fakeProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{sandbox.NewResource}
}
func (p fakeProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// TestImportOfAMissingObjectSaysSo: importing an ID that names no object
// fails in the import's read with the kind, namespace and name, instead of
// Terraform's text about regions and endpoints. (A Read that finds the
// object marks the import as read, so a later out-of-band deletion is
// still just removed from the state.)
func TestImportOfAMissingObjectSaysSo(t *testing.T) {
	gvr := sandbox.Kind.GVR
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "SandboxList"})
	s := pt.New(t, func() fwprovider.Provider {
		return fakeProvider{conn.ForClients("agentsandbox", kube.NewClientFromDynamic(dyn, nil), nil)}
	})
	if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{})); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}
	diags, _ := s.ImportThenRead(t, sandbox.ResourceType, "agents/missing")
	errs := pt.Errors(diags)
	if len(errs) != 1 {
		t.Fatalf("want one error:\n  %s", pt.Describe(diags))
	}
	text := errs[0].Summary + " " + errs[0].Detail
	for _, want := range []string{"Sandbox agents/missing not found", `"missing" in namespace "agents"`, "remove the import"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
}
