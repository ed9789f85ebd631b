package provider

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// The fast path also plans creates (internal/fastpath/create.go). These
// tests plan creates through the framework's server alone and through the
// server Terraform gets, and require the same answer field by field, in
// two ways:
//
//   - TestFastPathCreate_schemaWalk: the schema of every resource type of
//     the provider, on a resource that has nothing but that schema (no
//     ModifyPlan), with configurations generated from the schema (every
//     attribute set, only the required ones, every other one null, unknown
//     leaves, unknown collections, unknown nested objects). This is the
//     framework's defaults, unknown marking and plan modifiers against the
//     fast path's walk, whatever the resource's own ModifyPlan would say.
//   - TestFastPathCreate_sameAnswerAsTheFramework: the provider's own
//     resources, realistic configurations, ModifyPlan included, and cases
//     the fast path must leave to the framework.

// want* say whether the fast path must answer a case.
const (
	mustAnswer = iota
	mustDelegate
)

// compareCreate plans a create through both servers and requires the
// same answer; it returns the framework's.
func compareCreate(t *testing.T, framework tfprotov6.ProviderServer, fast *fastpath.Server, typ tftypes.Type, typeName string, proposed, config tftypes.Value, want int) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	req := func() *tfprotov6.PlanResourceChangeRequest {
		return &tfprotov6.PlanResourceChangeRequest{
			TypeName:         typeName,
			PriorState:       dv(t, typ, tftypes.NewValue(typ, nil)),
			ProposedNewState: dv(t, typ, proposed),
			Config:           dv(t, typ, config),
		}
	}
	wantResp, err := framework.PlanResourceChange(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	c0, _ := fastpath.CreateCounts()
	got, err := fast.PlanResourceChange(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := fastpath.CreateCounts()
	if answered := c1 > c0; answered != (want == mustAnswer) {
		t.Errorf("answered by the fast path: %v, want %v (framework's diagnostics: %s)", answered, want == mustAnswer, pt.Describe(wantResp.Diagnostics))
	}
	sameAnswer(t, typ, got, wantResp)
	return wantResp
}

// sameAnswer requires got to be the same answer to a plan as want, field
// by field.
func sameAnswer(t *testing.T, typ tftypes.Type, got, want *tfprotov6.PlanResourceChangeResponse) {
	t.Helper()
	if g, w := diagStrings(got.Diagnostics), diagStrings(want.Diagnostics); g != w {
		t.Errorf("diagnostics:\n got  %s\n want %s", g, w)
	}
	if (got.PlannedState == nil) != (want.PlannedState == nil) {
		t.Fatalf("planned state: got %v, want %v", got.PlannedState, want.PlannedState)
	}
	if want.PlannedState != nil {
		gv, err1 := got.PlannedState.Unmarshal(typ)
		wv, err2 := want.PlannedState.Unmarshal(typ)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !gv.Equal(wv) {
			diffs, _ := gv.Diff(wv)
			for _, d := range diffs {
				t.Errorf("planned state differs at %s: got %v, want %v", d.Path, d.Value1, d.Value2)
			}
		}
	}
	if g, w := pathStrings(got.RequiresReplace), pathStrings(want.RequiresReplace); g != w {
		t.Errorf("requires replace: got %s, want %s", g, w)
	}
	if string(got.PlannedPrivate) != string(want.PlannedPrivate) {
		t.Errorf("planned private: got %q, want %q", got.PlannedPrivate, want.PlannedPrivate)
	}
	if (got.Deferred == nil) != (want.Deferred == nil) || (got.PlannedIdentity == nil) != (want.PlannedIdentity == nil) {
		t.Errorf("deferred/identity: got %v %v, want %v %v", got.Deferred, got.PlannedIdentity, want.Deferred, want.PlannedIdentity)
	}
}

// schemaOnly is a resource with another resource's type name and schema
// and nothing else: the framework plans it with its defaults, unknown
// marking and the schema's plan modifiers alone.
type schemaOnly struct{ r resource.Resource }

func (s schemaOnly) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	s.r.Metadata(ctx, req, resp)
}
func (s schemaOnly) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	s.r.Schema(ctx, req, resp)
}
func (schemaOnly) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}
func (schemaOnly) Read(context.Context, resource.ReadRequest, *resource.ReadResponse)       {}
func (schemaOnly) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}
func (schemaOnly) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// schemaOnlyProvider serves the provider's resource types as schemaOnly.
type schemaOnlyProvider struct{}

func (schemaOnlyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
}
func (schemaOnlyProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}
func (schemaOnlyProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}
func (schemaOnlyProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
func (schemaOnlyProvider) Resources(ctx context.Context) []func() resource.Resource {
	var out []func() resource.Resource
	for _, f := range (&agentSandboxProvider{}).Resources(ctx) {
		out = append(out, func() resource.Resource { return schemaOnly{f()} })
	}
	return out
}

// schemaOnlyServers are the framework's server and the fast path's for
// schemaOnlyProvider, both configured, the provider's resource schemas and
// their type names, sorted.
func schemaOnlyServers(t *testing.T) (framework tfprotov6.ProviderServer, fast *fastpath.Server, schemas *tfprotov6.GetProviderSchemaResponse, names []string) {
	t.Helper()
	ctx := context.Background()
	p := schemaOnlyProvider{}
	framework = providerserver.NewProtocol6(p)()
	fw, ok := providerserver.NewProtocol6(p)().(fastpath.FrameworkServer)
	if !ok {
		t.Fatal("the framework's server lacks a service")
	}
	fast = fastpath.New(fw, TypeName, p.Resources(ctx), func() (any, bool) { return nil, true })
	empty := dv(t, tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}, tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}, map[string]tftypes.Value{}))
	for _, srv := range []tfprotov6.ProviderServer{framework, fast} {
		resp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: empty})
		if err != nil || len(pt.Errors(resp.Diagnostics)) > 0 {
			t.Fatal(err, pt.Describe(resp.Diagnostics))
		}
	}
	schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for n := range schemas.ResourceSchemas {
		names = append(names, n)
	}
	sort.Strings(names)
	return framework, fast, schemas, names
}

func TestFastPathCreate_schemaWalk(t *testing.T) {
	ctx := context.Background()
	framework, fast, schemas, names := schemaOnlyServers(t)
	// The three types of a platform's bulk (the benchmark's sets) and
	// sandboxes must qualify.
	mustQualify := map[string]bool{
		"agentsandbox_sandbox_template": true, "agentsandbox_warm_pool": true, "agentsandbox_network_policy": true,
		"agentsandbox_sandbox": true,
	}
	for _, typeName := range names {
		t.Run(typeName, func(t *testing.T) {
			ok, why := fast.EligibleCreate(ctx, typeName)
			if !ok {
				if mustQualify[typeName] {
					t.Fatalf("creates not planned by the fast path: %s", why)
				}
				t.Logf("not eligible: %s", why)
			}
			want := mustAnswer
			if !ok {
				want = mustDelegate
			}
			block := schemas.ResourceSchemas[typeName].Block
			typ := block.ValueType()
			for _, mode := range []genMode{genAll, genRequired, genAlternate, genAlternateOther, genUnknownLeaves, genUnknownCollections, genUnknownObjects, genEmptyCollections} {
				t.Run(mode.String(), func(t *testing.T) {
					g := &generator{mode: mode}
					cfg := g.block(block, true)
					if g.touched == 0 && mode != genAll && mode != genRequired {
						t.Skip("nothing of this kind in the schema")
					}
					resp := compareCreate(t, framework, fast, typ, typeName, cfg, cfg, want)
					if len(resp.Diagnostics) > 0 {
						t.Errorf("control: the framework's diagnostics: %s", pt.Describe(resp.Diagnostics))
					}
					// Control: the framework planned something else than
					// the configuration (defaults, unknowns), so that the
					// comparison is not of copies.
					planned, err := resp.PlannedState.Unmarshal(typ)
					if err != nil {
						t.Fatal(err)
					}
					diffs, err := planned.Diff(cfg)
					if err != nil {
						t.Fatal(err)
					}
					if len(diffs) == 0 && (mode == genAll || mode == genRequired) {
						t.Errorf("control: the framework planned the configuration as it is")
					}
					t.Logf("%d values planned otherwise than configured", len(diffs))
				})
			}
		})
	}
}

// genMode says how a generated configuration fills a schema.
type genMode int

const (
	genAll                genMode = iota // every settable attribute and block, two elements per collection
	genRequired                          // only the required ones
	genAlternate                         // every other optional one null (defaults left null at every depth)
	genAlternateOther                    // the others
	genUnknownLeaves                     // every other settable primitive attribute unknown
	genUnknownCollections                // every other list, map or set attribute or block unknown
	genUnknownObjects                    // every other single nested attribute or block unknown
	genEmptyCollections                  // collections empty
)

func (m genMode) String() string {
	return [...]string{"all", "required", "alternate", "alternate other", "unknown leaves", "unknown collections", "unknown objects", "empty collections"}[m]
}

type generator struct {
	mode    genMode
	n       int // a counter: distinct values, alternation
	touched int // how many values the mode changed from genAll
}

func (g *generator) next() int { g.n++; return g.n }

// skip reports whether an optional value is left null.
func (g *generator) skip() bool {
	switch g.mode {
	case genRequired:
		g.touched++
		return true
	case genAlternate, genAlternateOther:
		if g.next()%2 == int(g.mode-genAlternate) {
			g.touched++
			return true
		}
	}
	return false
}

func (g *generator) unknown(kind genMode) bool {
	if g.mode == kind && g.next()%2 == 0 {
		g.touched++
		return true
	}
	return false
}

func (g *generator) block(b *tfprotov6.SchemaBlock, root bool) tftypes.Value {
	typ := b.ValueType()
	vals := map[string]tftypes.Value{}
	for _, a := range b.Attributes {
		vals[a.Name] = g.attribute(a)
	}
	for _, nb := range b.BlockTypes {
		vals[nb.TypeName] = g.nestedBlock(nb)
	}
	_ = root
	return tftypes.NewValue(typ, vals)
}

func (g *generator) attribute(a *tfprotov6.SchemaAttribute) tftypes.Value {
	typ := a.ValueType()
	if !a.Required && !a.Optional {
		return tftypes.NewValue(typ, nil) // computed only
	}
	if !a.Required && g.skip() {
		return tftypes.NewValue(typ, nil)
	}
	if a.NestedType != nil {
		return g.object(a.NestedType, typ)
	}
	return g.value(typ)
}

func (g *generator) object(o *tfprotov6.SchemaObject, typ tftypes.Type) tftypes.Value {
	ot := typ
	switch tt := typ.(type) {
	case tftypes.List:
		ot = tt.ElementType
	case tftypes.Set:
		ot = tt.ElementType
	case tftypes.Map:
		ot = tt.ElementType
	}
	elem := func() tftypes.Value {
		vals := map[string]tftypes.Value{}
		for _, a := range o.Attributes {
			vals[a.Name] = g.attribute(a)
		}
		return tftypes.NewValue(ot, vals)
	}
	switch o.Nesting {
	case tfprotov6.SchemaObjectNestingModeSingle:
		if g.unknown(genUnknownObjects) {
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
		return elem()
	case tfprotov6.SchemaObjectNestingModeMap:
		if g.unknown(genUnknownCollections) {
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
		if g.mode == genEmptyCollections {
			g.touched++
			return tftypes.NewValue(typ, map[string]tftypes.Value{})
		}
		return tftypes.NewValue(typ, map[string]tftypes.Value{fmt.Sprint("k", g.next()): elem(), fmt.Sprint("k", g.next()): elem()})
	default: // list, set
		if g.unknown(genUnknownCollections) {
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
		if g.mode == genEmptyCollections {
			g.touched++
			return tftypes.NewValue(typ, []tftypes.Value{})
		}
		return tftypes.NewValue(typ, []tftypes.Value{elem(), elem()})
	}
}

func (g *generator) nestedBlock(nb *tfprotov6.SchemaNestedBlock) tftypes.Value {
	typ := nb.ValueType()
	switch nb.Nesting {
	case tfprotov6.SchemaNestedBlockNestingModeSingle:
		if g.unknown(genUnknownObjects) {
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
		if g.skip() {
			return tftypes.NewValue(typ, nil)
		}
		return g.block(nb.Block, false)
	default:
		if g.unknown(genUnknownCollections) {
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
		if g.mode == genEmptyCollections || g.mode == genRequired {
			return tftypes.NewValue(typ, []tftypes.Value{})
		}
		return tftypes.NewValue(typ, []tftypes.Value{g.block(nb.Block, false), g.block(nb.Block, false)})
	}
}

// value is a value of a primitive or collection type (an attribute that
// is not nested).
func (g *generator) value(typ tftypes.Type) tftypes.Value {
	switch tt := typ.(type) {
	case tftypes.List, tftypes.Set, tftypes.Map:
		if g.unknown(genUnknownCollections) {
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
		if g.mode == genEmptyCollections {
			g.touched++
			if _, ok := tt.(tftypes.Map); ok {
				return tftypes.NewValue(typ, map[string]tftypes.Value{})
			}
			return tftypes.NewValue(typ, []tftypes.Value{})
		}
		switch tt := tt.(type) {
		case tftypes.List:
			return tftypes.NewValue(typ, []tftypes.Value{g.value(tt.ElementType), g.value(tt.ElementType)})
		case tftypes.Set:
			return tftypes.NewValue(typ, []tftypes.Value{g.value(tt.ElementType), g.value(tt.ElementType)})
		case tftypes.Map:
			return tftypes.NewValue(typ, map[string]tftypes.Value{fmt.Sprint("k", g.next()): g.value(tt.ElementType)})
		}
	case tftypes.Object:
		vals := map[string]tftypes.Value{}
		for n, at := range tt.AttributeTypes {
			vals[n] = g.value(at)
		}
		return tftypes.NewValue(typ, vals)
	}
	if g.unknown(genUnknownLeaves) {
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, fmt.Sprint("v", g.next()))
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, big.NewFloat(float64(g.next())))
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, g.next()%2 == 0)
	}
	panic(fmt.Sprintf("type %s", typ))
}

// createCase is the create of one configuration; want says whether the
// fast path must answer it, diags whether the framework's answer has
// diagnostics (a control).
type createCase struct {
	name     string
	cfg      map[string]any
	proposed map[string]any // nil: cfg, as Terraform proposes a create
	want     int
	diags    bool
}

// with returns cfg with the attributes of extra set over it (nil: removed).
func with(cfg map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range cfg {
		out[k] = v
	}
	for k, v := range extra {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// richTemplate sets most of a template: several containers, nested lists
// of objects, maps, defaults overridden and others left null, network
// policy rules, claim templates.
func richTemplate() map[string]any {
	return map[string]any{
		"name": "rich", "namespace": "agents", "network_policy_management": "Managed",
		"env_vars_injection_policy": "Allowed", "volume_claim_templates_policy": "Disallowed",
		"labels":      map[string]any{"team": "a", "tier": "b"},
		"annotations": map[string]any{"example.com/note": "x"},
		"network_policy": map[string]any{
			"allow_egress": []any{map[string]any{"cidr": "10.0.0.0/8"}, map[string]any{"cidr": "192.168.0.0/16"}},
			"ingress":      []any{map[string]any{"ports": []any{map[string]any{"port": "8888"}}}},
		},
		"volume_claim_templates": []any{map[string]any{
			"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}},
		}},
		"pod_template": map[string]any{
			"labels":           map[string]any{"app": "agent"},
			"annotations":      map[string]any{"example.com/a": "b"},
			"security_context": map[string]any{"run_as_user": 10001, "run_as_group": 10001, "fs_group": 10001},
			"containers": []any{
				pt.Container(map[string]any{
					"ports": []any{
						map[string]any{"container_port": 8888},
						map[string]any{"container_port": 9999, "protocol": "UDP", "name": "metrics"},
					},
					"env":           []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}},
					"volume_mounts": []any{map[string]any{"name": "data", "mount_path": "/data"}},
					"resources": map[string]any{
						"requests": map[string]any{"cpu": "500m", "memory": "512Mi"},
						"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
					},
				}),
				pt.Container(map[string]any{"name": "sidecar", "image": "busybox:1.36", "command": []any{"sleep", "infinity"}}),
			},
		},
	}
}

func TestFastPathCreate_sameAnswerAsTheFramework(t *testing.T) {
	framework, fast, s := fastpathServers(t)
	ctx := context.Background()
	container := func(extra map[string]any) []any { return []any{pt.Container(extra)} }
	cases := map[string][]createCase{
		"agentsandbox_sandbox_template": {
			{name: "minimal", cfg: map[string]any{"name": "python", "namespace": "agents",
				"pod_template": map[string]any{"containers": container(nil)}}},
			{name: "rich", cfg: richTemplate()},
			{name: "unknown name", cfg: with(richTemplate(), map[string]any{"name": pt.Unknown})},
			{name: "unknown labels", cfg: with(richTemplate(), map[string]any{"labels": pt.Unknown})},
			{name: "unknown containers", cfg: with(richTemplate(), map[string]any{"pod_template": map[string]any{"containers": pt.Unknown}})},
			{name: "unknown security context", cfg: with(richTemplate(), map[string]any{"pod_template": map[string]any{
				"security_context": pt.Unknown, "containers": container(nil)}})},
			{name: "unknown image and env", cfg: with(richTemplate(), map[string]any{"pod_template": map[string]any{
				"containers": container(map[string]any{"image": pt.Unknown, "env": pt.Unknown})}})},
			{name: "unknown pod template", cfg: with(richTemplate(), map[string]any{"pod_template": pt.Unknown})},
			{name: "null network policy and claims", cfg: with(richTemplate(), map[string]any{"network_policy": nil, "volume_claim_templates": nil})},
			// A RuntimeClass ModifyPlan cannot check without a cluster: a
			// ModifyPlan diagnostic.
			// Terraform proposes the configuration for a create; a proposed
			// container known where its configuration is not would make
			// the framework's two lookups of the configuration disagree:
			// left to the framework.
			{name: "proposed known where the configuration is unknown",
				cfg:      with(richTemplate(), map[string]any{"pod_template": map[string]any{"containers": []any{pt.Unknown}}}),
				proposed: with(richTemplate(), map[string]any{"pod_template": map[string]any{"containers": container(nil)}}),
				want:     mustDelegate},
		},
		"agentsandbox_network_policy": {
			{name: "minimal", cfg: map[string]any{"name": "deny", "namespace": "agents"}},
			{name: "unknown selector", cfg: with(fastpathObjects["agentsandbox_network_policy"], map[string]any{"pod_selector": pt.Unknown})},
			{name: "unknown labels", cfg: with(fastpathObjects["agentsandbox_network_policy"], map[string]any{"labels": map[string]any{"a": pt.Unknown}})},
			// The name of the controller's policy for a template: a
			// ModifyPlan warning.
			{name: "warning: the controller's policy name", cfg: map[string]any{"name": sandboxapi.TemplateNetworkPolicyName("python"),
				"namespace": "agents", "template": "python"}, want: mustDelegate, diags: true},
		},
		"agentsandbox_sandbox": {
			// Claim templates: storage has a provider plan modifier marked
			// InertOnCreate (blueprint.sameQuantity).
			{name: "claim templates and shutdown", cfg: with(fastpathObjects["agentsandbox_sandbox"], map[string]any{
				"shutdown_time": "2030-01-01T00:00:00Z", "shutdown_policy": "Delete",
				"volume_claim_templates": []any{map[string]any{
					"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1024Mi"}}}},
				"pod_template": map[string]any{"containers": container(map[string]any{
					"volume_mounts": []any{map[string]any{"name": "data", "mount_path": "/data"}}})},
			})},
			{name: "unknown storage and containers", cfg: with(fastpathObjects["agentsandbox_sandbox"], map[string]any{
				"volume_claim_templates": []any{map[string]any{
					"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": pt.Unknown}}}},
				"pod_template": map[string]any{"containers": pt.Unknown},
			})},
		},
		"agentsandbox_sandbox_claim": {
			{name: "unknown warm pool", cfg: with(fastpathObjects["agentsandbox_sandbox_claim"], map[string]any{"warm_pool": pt.Unknown})},
		},
		"agentsandbox_warm_pool": {
			{name: "minimal", cfg: map[string]any{"name": "pool", "namespace": "agents", "template": "python"}},
			{name: "replicas and update strategy set", cfg: with(fastpathObjects["agentsandbox_warm_pool"], map[string]any{"replicas": 3, "update_strategy": "Recreate"})},
			{name: "unknown template and name", cfg: with(fastpathObjects["agentsandbox_warm_pool"], map[string]any{"name": pt.Unknown, "template": pt.Unknown})},
			{name: "unknown replicas owner", cfg: with(fastpathObjects["agentsandbox_warm_pool"], map[string]any{"replicas_managed_externally": pt.Unknown})},
			// Replicas set while managed externally: a ModifyPlan error.
			{name: "error: replicas managed externally", cfg: with(fastpathObjects["agentsandbox_warm_pool"], map[string]any{
				"replicas": 2, "replicas_managed_externally": true}), want: mustDelegate, diags: true},
			// A fraction for a whole number: the framework's error.
			{name: "error: fractional replicas", cfg: with(fastpathObjects["agentsandbox_warm_pool"], map[string]any{
				"replicas": 1.5}), want: mustDelegate, diags: true},
		},
	}
	for typeName, cfg := range fastpathObjects {
		cases[typeName] = append(cases[typeName], createCase{name: "realistic", cfg: cfg})
	}
	for typeName, cs := range cases {
		t.Run(typeName, func(t *testing.T) {
			typ := s.ResourceType(t, typeName)
			if ok, why := fast.EligibleCreate(ctx, typeName); !ok {
				t.Logf("not eligible: %s", why)
			}
			for _, c := range cs {
				t.Run(c.name, func(t *testing.T) {
					proposed := c.proposed
					if proposed == nil {
						proposed = c.cfg
					}
					resp := compareCreate(t, framework, fast, typ, typeName, pt.Value(typ, proposed), pt.Value(typ, c.cfg), c.want)
					if (len(resp.Diagnostics) > 0) != c.diags {
						t.Errorf("control: the framework's diagnostics: %s", pt.Describe(resp.Diagnostics))
					}
				})
			}
		})
	}
}
