package podtemplate

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// The harness serves a test-only resource that embeds pod_template exactly
// as the real resources will, through the framework's protocol 6 server.
// Tests then see what Terraform sees: the schema as served, attribute
// validators, the resource's ValidateConfig (calling Validate), and the plan
// with the schema defaults applied.

const testTypeName = "agentsandbox_test_pod"

type testProvider struct{}

func (testProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "agentsandbox"
}
func (testProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (testProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}
func (testProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return testResource{} },
		func() resource.Resource { return e2eResource{} },
	}
}
func (testProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type testResource struct{}

type testResourceModel struct {
	PodTemplate    types.Object `tfsdk:"pod_template"`
	ClaimTemplates types.List   `tfsdk:"claim_templates"`
}

func (testResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = testTypeName
}

func (testResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "test resource",
		Attributes: map[string]schema.Attribute{
			"pod_template": Attribute(),
			"claim_templates": schema.ListAttribute{
				Optional: true, ElementType: types.StringType, MarkdownDescription: "volume claim template names",
			},
		},
	}
}

func (testResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m testResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	opts := Options{}
	if m.ClaimTemplates.IsUnknown() {
		opts.SkipVolumeMountCheck = true
	} else {
		opts.ClaimTemplateNames = stringsOf(m.ClaimTemplates)
	}
	resp.Diagnostics.Append(Validate(ctx, path.Root("pod_template"), m.PodTemplate, opts)...)
}

func (testResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
}
func (testResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}
func (testResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}
func (testResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

var _ resource.ResourceWithValidateConfig = testResource{}

// harness talks to the served test resource through protocoltest.
type harness struct {
	t      *testing.T
	server *pt.Server
	schema schema.Schema
	typ    tftypes.Object
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	server := pt.New(t, func() provider.Provider { return testProvider{} })
	var sresp resource.SchemaResponse
	testResource{}.Schema(context.Background(), resource.SchemaRequest{}, &sresp)
	return &harness{
		t:      t,
		server: server,
		schema: sresp.Schema,
		typ:    server.ResourceType(t, testTypeName).(tftypes.Object),
	}
}

// top wraps a pod_template value (a tree of Go values, see pt.Value) into
// the resource's configuration.
func top(pod any, extra ...map[string]any) map[string]any {
	cfg := map[string]any{"pod_template": pod}
	for _, e := range extra {
		for k, v := range e {
			cfg[k] = v
		}
	}
	return cfg
}

// validate runs ValidateResourceConfig (attribute validators and the
// resource's ValidateConfig) and returns its diagnostics.
func (h *harness) validate(pod any, extra ...map[string]any) []*tfprotov6.Diagnostic {
	h.t.Helper()
	return h.server.ValidateResource(h.t, testTypeName, top(pod, extra...))
}

// plan validates pod and plans its creation; it fails the test on any error
// and returns the planned pod_template (defaults applied).
func (h *harness) plan(pod any, extra ...map[string]any) types.Object {
	h.t.Helper()
	if errs := diagStrings(h.validate(pod, extra...), tfprotov6.DiagnosticSeverityError); len(errs) > 0 {
		h.t.Fatalf("validation failed: %v", errs)
	}
	raw, diags := h.server.Plan(h.t, testTypeName, top(pod, extra...))
	if errs := diagStrings(diags, tfprotov6.DiagnosticSeverityError); len(errs) > 0 {
		h.t.Fatalf("plan failed: %v", errs)
	}
	var obj types.Object
	plan := tfsdk.Plan{Raw: raw, Schema: h.schema}
	if d := plan.GetAttribute(context.Background(), path.Root("pod_template"), &obj); d.HasError() {
		h.t.Fatalf("reading the plan: %v", d)
	}
	return obj
}

// object decodes pod (no defaults applied: what ValidateConfig sees).
func (h *harness) object(pod any) types.Object {
	h.t.Helper()
	var obj types.Object
	cfg := tfsdk.Config{Raw: pt.Value(h.typ, top(pod)), Schema: h.schema}
	if d := cfg.GetAttribute(context.Background(), path.Root("pod_template"), &obj); d.HasError() {
		h.t.Fatalf("reading the configuration: %v", d)
	}
	return obj
}

// unknown marks a value as unknown in a configuration tree.
var unknown = pt.Unknown

// diagStrings formats the diagnostics of one severity as "path: summary".
func diagStrings(ds []*tfprotov6.Diagnostic, sev tfprotov6.DiagnosticSeverity) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == sev {
			out = append(out, pt.AttributePath(d.Attribute)+": "+d.Summary+" ("+d.Detail+")")
		}
	}
	sort.Strings(out)
	return out
}

// diagPaths is the sorted attribute paths of the diagnostics of one severity.
func diagPaths(ds []*tfprotov6.Diagnostic, sev tfprotov6.DiagnosticSeverity) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == sev {
			out = append(out, pt.AttributePath(d.Attribute))
		}
	}
	sort.Strings(out)
	return out
}

// minimalPod is the smallest valid pod_template: one container with limits.
func minimalPod() map[string]any {
	return map[string]any{
		"containers": []any{container("main")},
	}
}

func container(name string) map[string]any {
	return map[string]any{
		"name":  name,
		"image": "python:3.12-slim",
		"resources": map[string]any{
			"limits": map[string]any{"cpu": "1", "memory": "1Gi"},
		},
	}
}

// with returns a deep copy of a configuration tree with the value at a
// dotted path (list indexes as numbers: "containers.0.image") set; nil
// deletes it.
func with(tree map[string]any, p string, v any) map[string]any {
	out := deepCopy(tree).(map[string]any)
	steps := strings.Split(p, ".")
	var cur any = out
	for i, s := range steps {
		last := i == len(steps)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if v == nil {
					delete(c, s)
				} else {
					c[s] = v
				}
				return out
			}
			if _, ok := c[s]; !ok {
				c[s] = map[string]any{}
			}
			cur = c[s]
		case []any:
			idx, _ := strconv.Atoi(s)
			if last {
				c[idx] = v
				return out
			}
			cur = c[idx]
		}
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	default:
		return v
	}
}

type diagList struct{ d diag.Diagnostics }

// TestMain requires every check inside pod_template (its attribute
// validators, Validate's own, and the label selector checks it shares
// with the network rules, which only its node affinity reaches all of) to
// be reached by this package's tables.
func TestMain(m *testing.M) {
	pt.Main(m, pt.Coverage{
		Provider: func() provider.Provider { return testProvider{} }, Resources: []string{testTypeName}, Sources: []string{".", "../labelselector"},
		Exempt: map[string]string{
			"pod_spec_overrides sets fields the cluster does not serve": "TestUnservedFields: made at plan against the cluster's served CRD " +
				"(CheckServed), which this package's harness has no cluster for; the test calls CheckServed with served schemas",
		},
	})
}
