// Package protocoltest drives a resource or data source of the provider
// through the plugin protocol, as Terraform does, with no terraform binary
// and no cluster: configurations are built from Go values, and what comes
// back are the diagnostics (with their attribute paths rendered the way
// people write them) and planned values. It is for tests of plan-time
// behaviour: validation tables, values planned without a cluster, proof
// that planning sends no request.
package protocoltest

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/nestedattr"
)

type unknownValue struct{}

// Unknown marks a value as "known after apply" in a configuration built by
// Value.
var Unknown = unknownValue{}

// Value builds a Terraform value of type typ from Go values: objects from
// map[string]any (missing attributes are null), lists and sets from []any,
// maps from map[string]string or map[string]any, numbers from int or
// int64 (an int given to a string attribute becomes its decimal spelling,
// as Terraform converts it), strings and bools as themselves, nil for null and Unknown for a
// value not known yet. It panics on an attribute the type does not have,
// so a misspelt test configuration fails loudly.
func Value(typ tftypes.Type, v any) tftypes.Value {
	if v == nil {
		return tftypes.NewValue(typ, nil)
	}
	if _, ok := v.(unknownValue); ok {
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	switch tt := typ.(type) {
	case tftypes.Object:
		in, ok := v.(map[string]any)
		if !ok {
			panic(fmt.Sprintf("%s needs a map[string]any, got %T", tt, v))
		}
		for k := range in {
			if _, ok := tt.AttributeTypes[k]; !ok {
				panic(fmt.Sprintf("no attribute %q in %s", k, tt))
			}
		}
		vals := map[string]tftypes.Value{}
		for name, at := range tt.AttributeTypes {
			vals[name] = Value(at, in[name])
		}
		return tftypes.NewValue(typ, vals)
	case tftypes.List:
		return tftypes.NewValue(typ, elements(tt.ElementType, v))
	case tftypes.Set:
		return tftypes.NewValue(typ, elements(tt.ElementType, v))
	case tftypes.Map:
		vals := map[string]tftypes.Value{}
		switch m := v.(type) {
		case map[string]string:
			for k, e := range m {
				vals[k] = Value(tt.ElementType, e)
			}
		case map[string]any:
			for k, e := range m {
				vals[k] = Value(tt.ElementType, e)
			}
		}
		return tftypes.NewValue(typ, vals)
	}
	switch x := v.(type) {
	case int:
		if typ.Is(tftypes.String) {
			// As Terraform converts a number given to a string attribute.
			return tftypes.NewValue(typ, fmt.Sprint(x))
		}
		return tftypes.NewValue(typ, big.NewFloat(float64(x)))
	case int64:
		return tftypes.NewValue(typ, new(big.Float).SetInt64(x))
	default:
		return tftypes.NewValue(typ, x)
	}
}

func elements(typ tftypes.Type, v any) []tftypes.Value {
	in, ok := v.([]any)
	if !ok {
		panic(fmt.Sprintf("a list or set of %s needs a []any, got %T", typ, v))
	}
	out := make([]tftypes.Value, 0, len(in))
	for _, e := range in {
		out = append(out, Value(typ, e))
	}
	return out
}

// Server is one provider instance served over protocol 6 in-process.
type Server struct {
	srv tfprotov6.ProviderServer
	// raw is the framework's server without nestedattr's layer, whose
	// answers the fast path must give.
	raw         tfprotov6.ProviderServer
	resources   map[string]*tfprotov6.Schema
	dataSources map[string]*tfprotov6.Schema
	// types caches the value types of the schemas: deriving one walks the
	// whole schema, which for the pod template is most of a validation.
	types map[string]tftypes.Type

	// fast is the validation fast path (fastpath.Server.ValidateFast) in
	// front of a second instance of the provider: every ValidateResource
	// also asks it and, when it answers, requires the framework's
	// diagnostics (as a multiset). Once configured, it has no provider
	// data to give resources and leaves every validation to the framework.
	fast *fastpath.Server
	// FastAnswered and FastDelegated count the validations the fast path
	// answered (with the framework's answer) and left to the framework.
	FastAnswered, FastDelegated int
}

// New serves the provider that newProvider builds. The provider is not
// configured: validation and planning of new objects must not need it.
func New(t testing.TB, newProvider func() provider.Provider) *Server {
	t.Helper()
	p := newProvider()
	raw, ok := providerserver.NewProtocol6(p)().(nestedattr.Inner)
	if !ok {
		t.Fatal("the framework's server lacks a service nestedattr.Inner expects")
	}
	// What Terraform talks to: the framework behind package nestedattr's
	// layer (the provider's fast path is compared separately, below).
	srv := nestedattr.New(raw, p)
	schemas, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range schemas.Diagnostics {
		t.Fatalf("provider schema: %s: %s", d.Summary, d.Detail)
	}
	recordBlocks(schemas.Provider)
	for _, sch := range schemas.ResourceSchemas {
		recordBlocks(sch)
	}
	for _, sch := range schemas.DataSourceSchemas {
		recordBlocks(sch)
	}
	return &Server{srv: srv, raw: raw, resources: schemas.ResourceSchemas, dataSources: schemas.DataSourceSchemas, types: map[string]tftypes.Type{},
		fast: newFast(t, newProvider)}
}

// newFast is the validation fast path in front of the framework's server of
// another instance of the provider.
func newFast(t testing.TB, newProvider func() provider.Provider) *fastpath.Server {
	t.Helper()
	ctx := context.Background()
	p := newProvider()
	fw, ok := providerserver.NewProtocol6(p)().(fastpath.FrameworkServer)
	if !ok {
		t.Fatal("the framework's server lacks a service fastpath.FrameworkServer expects")
	}
	m := nestedattr.Answer(ctx, p, provider.Provider.Metadata, provider.MetadataRequest{})
	return fastpath.New(fw, m.TypeName, p.Resources(ctx), func() (any, bool) { return nil, false })
}

// ResourceType is the value type of a resource's schema; it fails t when
// the provider does not register the resource.
func (s *Server) ResourceType(t testing.TB, typeName string) tftypes.Type {
	t.Helper()
	return s.valueType(t, "resource", s.resources, typeName, typeName)
}

// DataSourceType is the value type of a data source's schema.
func (s *Server) DataSourceType(t testing.TB, typeName string) tftypes.Type {
	t.Helper()
	return s.valueType(t, "data", s.dataSources, typeName, "data source "+typeName)
}

// valueType is the value type of the schema schemas has for typeName,
// cached under kind and typeName; named is what t's failure calls the type
// when the provider does not register it.
func (s *Server) valueType(t testing.TB, kind string, schemas map[string]*tfprotov6.Schema, typeName, named string) tftypes.Type {
	t.Helper()
	key := kind + " " + typeName
	if typ, ok := s.types[key]; ok {
		return typ
	}
	sch, ok := schemas[typeName]
	if !ok {
		t.Fatalf("%s is not registered in the provider", named)
	}
	typ := sch.ValueType()
	s.types[key] = typ
	return typ
}

// Dynamic is Value(typ, v) as the protocol carries it.
func Dynamic(t testing.TB, typ tftypes.Type, v any) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, Value(typ, v))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// ValidateResource returns the diagnostics of ValidateResourceConfig for cfg.
func (s *Server) ValidateResource(t testing.TB, typeName string, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	cv := Dynamic(t, s.ResourceType(t, typeName), cfg)
	resp, err := s.srv.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName: typeName, Config: cv,
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.fast != nil {
		got, ok := s.fast.ValidateFast(context.Background(), &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: cv})
		if ok {
			s.FastAnswered++
			want, err := s.raw.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
				TypeName: typeName, Config: cv,
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := DiffDiagnostics(got.Diagnostics, want.Diagnostics); d != "" {
				t.Errorf("the validation fast path's diagnostics differ from the framework's:\n%s", d)
			}
		} else {
			s.FastDelegated++
		}
	}
	return observe("resource", typeName, resp.Diagnostics)
}

// DiffDiagnostics compares two lists of diagnostics as multisets
// (severity, summary, detail, attribute path) and describes what only one
// of them holds, "" when they agree.
func DiffDiagnostics(got, want []*tfprotov6.Diagnostic) string {
	key := func(d *tfprotov6.Diagnostic) string {
		p := "<no path>"
		if d.Attribute != nil {
			p = d.Attribute.String()
		}
		return fmt.Sprintf("%s at %s: %q: %q", d.Severity, p, d.Summary, d.Detail)
	}
	count := map[string]int{}
	for _, d := range got {
		count[key(d)]++
	}
	for _, d := range want {
		count[key(d)]--
	}
	var lines []string
	for k, n := range count {
		switch {
		case n > 0:
			lines = append(lines, fmt.Sprintf("  only in the fast path's (x%d): %s", n, k))
		case n < 0:
			lines = append(lines, fmt.Sprintf("  only in the framework's (x%d): %s", -n, k))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ValidateDataSource returns the diagnostics of ValidateDataResourceConfig.
func (s *Server) ValidateDataSource(t testing.TB, typeName string, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := s.srv.ValidateDataResourceConfig(context.Background(), &tfprotov6.ValidateDataResourceConfigRequest{
		TypeName: typeName, Config: Dynamic(t, s.DataSourceType(t, typeName), cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return observe("data", typeName, resp.Diagnostics)
}

// ReadDataSource reads the data source typeName with cfg, as a plan or
// apply does, returning its diagnostics. The provider must have been
// configured (ConfigureProvider) with clients that can read.
func (s *Server) ReadDataSource(t testing.TB, typeName string, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := s.srv.ReadDataSource(context.Background(), &tfprotov6.ReadDataSourceRequest{
		TypeName: typeName, Config: Dynamic(t, s.DataSourceType(t, typeName), cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return observe("data", typeName, resp.Diagnostics)
}

// Plan plans a new object of the resource typeName from cfg (no prior
// state), as the first plan of a resource does, and returns the planned
// object (null when planning failed) and the diagnostics. Values Terraform
// would compute before calling the provider (defaults) are the provider's
// own job here too, through the framework.
func (s *Server) Plan(t testing.TB, typeName string, cfg map[string]any) (tftypes.Value, []*tfprotov6.Diagnostic) {
	t.Helper()
	return s.plan(t, typeName, tftypes.NewValue(s.ResourceType(t, typeName), nil), cfg)
}

// PlanUpdate plans cfg against prior, the state an earlier apply left (an
// earlier Plan's object passed through Settled), as every later plan of a
// resource does, and returns what Plan returns.
func (s *Server) PlanUpdate(t testing.TB, typeName string, prior tftypes.Value, cfg map[string]any) (tftypes.Value, []*tfprotov6.Diagnostic) {
	t.Helper()
	return s.plan(t, typeName, prior, cfg)
}

// Settled is a planned object as its apply would store it when the
// provider computed nothing: every unknown value becomes null.
func Settled(t testing.TB, planned tftypes.Value) tftypes.Value {
	t.Helper()
	v, err := tftypes.Transform(planned, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (s *Server) plan(t testing.TB, typeName string, priorValue tftypes.Value, cfg map[string]any) (tftypes.Value, []*tfprotov6.Diagnostic) {
	t.Helper()
	typ := s.ResourceType(t, typeName)
	prior, err := tfprotov6.NewDynamicValue(typ, priorValue)
	if err != nil {
		t.Fatal(err)
	}
	c := Dynamic(t, typ, cfg)
	resp, err := s.srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: &prior, ProposedNewState: c, Config: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	observe("resource", typeName, resp.Diagnostics)
	if resp.PlannedState == nil {
		return tftypes.NewValue(typ, nil), resp.Diagnostics
	}
	planned, err := resp.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return planned, resp.Diagnostics
}

// PlanCreate is Plan with the planned object's attributes by name (nil
// when planning failed).
func (s *Server) PlanCreate(t testing.TB, typeName string, cfg map[string]any) (map[string]tftypes.Value, []*tfprotov6.Diagnostic) {
	t.Helper()
	planned, diags := s.Plan(t, typeName, cfg)
	if planned.IsNull() {
		return nil, diags
	}
	var attrs map[string]tftypes.Value
	if err := planned.As(&attrs); err != nil {
		t.Fatal(err)
	}
	return attrs, diags
}

// AttributePath renders a protocol attribute path the way people write it
// (nestedattr.Render): env[0].name, labels["team"],
// additional_pod_metadata.labels["a/b"], node_locations["europe-west1-b"]
// (an element of a set of strings).
func AttributePath(p *tftypes.AttributePath) string { return nestedattr.Render(p) }

// Errors keeps the error diagnostics.
func Errors(diags []*tfprotov6.Diagnostic) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			out = append(out, d)
		}
	}
	return out
}

// Describe renders diagnostics one per line, "path: summary: detail", for
// failure messages.
func Describe(diags []*tfprotov6.Diagnostic) string {
	var lines []string
	for _, d := range diags {
		lines = append(lines, fmt.Sprintf("%s: %s: %s", AttributePath(d.Attribute), d.Summary, d.Detail))
	}
	return strings.Join(lines, "\n  ")
}

// BadInput is one row of a bad-input table: a configuration that must be
// refused at plan, where (as AttributePath renders it) and with what words.
type BadInput struct {
	Name     string
	Config   map[string]any
	Path     string   // the attribute path the error must carry
	Mentions []string // what its summary or detail must contain, each
}

// Refused is a BadInput row: name, configuration, path, words.
func Refused(name string, config map[string]any, path string, mentions ...string) BadInput {
	return BadInput{Name: name, Config: config, Path: path, Mentions: mentions}
}

// ExpectRefused validates every case's configuration of the resource
// typeName, each in a subtest of its name, and requires an error at the
// case's path mentioning all of its words; validation must not send a
// single request to Kubernetes.
func (s *Server) ExpectRefused(t *testing.T, typeName string, cases []BadInput) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := kube.RequestCount()
			ExpectErrorAt(t, s.ValidateResource(t, typeName, tc.Config), tc.Path, tc.Mentions...)
			if n := kube.RequestCount() - before; n != 0 {
				t.Errorf("validation sent %d requests: %v", n, kube.RequestCounts())
			}
		})
	}
	t.Logf("%s: validation fast path: %d validations answered with the framework's diagnostics, %d left to the framework (this server so far)",
		typeName, s.FastAnswered, s.FastDelegated)
}

// ExpectErrorAt fails t unless diags hold an error at path (as
// AttributePath renders it) whose summary or detail contains every one of
// contains. An error inside a nested attribute (a path with a dot) must
// also name its path in its text: Terraform cannot quote its line (package
// nestedattr).
func ExpectErrorAt(t testing.TB, diags []*tfprotov6.Diagnostic, path string, contains ...string) {
	t.Helper()
	expectAt(t, tfprotov6.DiagnosticSeverityError, diags, path, contains)
}

// ExpectWarningAt is ExpectErrorAt for a warning.
func ExpectWarningAt(t testing.TB, diags []*tfprotov6.Diagnostic, path string, contains ...string) {
	t.Helper()
	expectAt(t, tfprotov6.DiagnosticSeverityWarning, diags, path, contains)
}

func expectAt(t testing.TB, severity tfprotov6.DiagnosticSeverity, diags []*tfprotov6.Diagnostic, path string, contains []string) {
	t.Helper()
	var found []*tfprotov6.Diagnostic
	for _, d := range diags {
		if d.Severity == severity {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		t.Fatalf("no %s; want one at %s; got:\n  %s", severity, path, Describe(diags))
	}
	if nested(path) {
		contains = append(contains, path)
	}
next:
	for _, d := range found {
		if AttributePath(d.Attribute) != path {
			continue
		}
		text := d.Summary + " " + d.Detail
		for _, c := range contains {
			if !strings.Contains(text, c) {
				continue next
			}
		}
		return
	}
	t.Fatalf("want a %s at %s mentioning %q; got:\n  %s", severity, path, contains, Describe(found))
}

// blockNames holds the type names of every block of the schemas served
// by New (timeouts, the provider's kubernetes and exec, ...): Terraform
// does quote the line of a path through blocks.
var blockNames sync.Map

func recordBlocks(sch *tfprotov6.Schema) {
	if sch == nil || sch.Block == nil {
		return
	}
	var walk func(b *tfprotov6.SchemaBlock)
	walk = func(b *tfprotov6.SchemaBlock) {
		for _, nb := range b.BlockTypes {
			blockNames.Store(nb.TypeName, true)
			walk(nb.Block)
		}
	}
	walk(sch.Block)
}

// nested says path (as AttributePath renders it) goes inside a nested
// attribute, where Terraform cannot quote the line: a step before the last
// that is not a block, such as pod_template.containers[0].image or
// network_policy.ingress[0], but not labels["a.b"], timeouts.create or
// kubernetes.exec.command.
func nested(path string) bool {
	var steps []string
	var cur strings.Builder
	depth := 0
	for _, r := range path {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == '.' && depth == 0:
			steps = append(steps, cur.String())
			cur.Reset()
			continue
		}
		if depth == 0 && r != ']' {
			cur.WriteRune(r)
		}
	}
	for _, st := range steps {
		if _, ok := blockNames.Load(st); !ok {
			return true
		}
	}
	return false
}

// Container is a valid pod template container for a configuration (python
// with CPU and memory limits), with extra's attributes set over it: the
// start of every bad-input case that breaks one container attribute.
func Container(extra map[string]any) map[string]any {
	c := map[string]any{
		"name": "python", "image": "python:3.13",
		"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
	}
	maps.Copy(c, extra)
	return c
}
