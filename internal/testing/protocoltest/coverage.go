package protocoltest

import (
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/nestedattr"
)

// Coverage proves that a package's bad-input tables reach every check
// inside a nested attribute (issue 37): each validator declared on an
// attribute inside a nested attribute (or on a nested attribute itself),
// and each custom check (a diagnostic with an attribute path, found by
// reading the source), must have produced a diagnostic at that attribute
// in the package's own tests, through a Server. The rows themselves
// assert the exact path and words (ExpectErrorAt and the tables' own
// comparisons); this is what says no check was left without a row.
//
// A package declares it in its TestMain (acctest.Main(m, c.Check) or
// Main(m, c)); the check runs after the tests, only when all of them ran
// (no -run or -skip) and passed.
type Coverage struct {
	// Provider builds the provider whose schemas are walked.
	Provider func() provider.Provider
	// Resources, DataSources: the type names this package's tables cover.
	Resources, DataSources []string
	// ProviderSchema: the tables cover the provider block too.
	ProviderSchema bool
	// Delegated are parts of these schemas built from a shared schema
	// whose own package's Coverage covers it: a check is left to it when
	// the shared schema has the same check (path, validator kinds and
	// descriptions) at the same place.
	Delegated []Delegation
	// Sources are directories (relative to the package's directory) whose
	// custom checks this package's tables cover.
	Sources []string
	// Exempt maps a check (a validated path as Check reports it,
	// "resource T a.b[*].c", or a custom check's summary) to the test of
	// this package that covers it instead and why no row through the
	// protocol can (say, a check made after downloading a manifest):
	// "TestName: reason", or "../dir.TestName: reason" for a test of
	// another package. The test must exist; a check that no longer
	// exists fails, so the list stays true.
	Exempt map[string]string
}

// Delegation is a shared schema embedded in a resource: Attributes (a
// map of framework attributes, walked as a schema's top level) appear in
// the resource under Prefix ("" for the top level), and package By's
// tables cover them.
type Delegation struct {
	Prefix     string
	Attributes any
	By         string
}

// observation is one diagnostic a Server returned.
type observation struct {
	kind, typ, path, summary string
	severity                 tfprotov6.DiagnosticSeverity
	located                  bool
}

var (
	observedMu sync.Mutex
	observed   []observation
)

// observe records the diagnostics a call about kind ("resource", "data",
// "provider") typ answered, for Coverage, and returns them.
func observe(kind, typ string, diags []*tfprotov6.Diagnostic) []*tfprotov6.Diagnostic {
	observedMu.Lock()
	defer observedMu.Unlock()
	for _, d := range diags {
		observed = append(observed, observation{
			kind: kind, typ: typ, path: pattern(d.Attribute), summary: d.Summary,
			severity: d.Severity, located: d.Attribute != nil && len(d.Attribute.Steps()) > 0,
		})
	}
	return diags
}

// pattern renders p with every element index or key as [*]:
// pod_template.containers[*].name, labels[*].
func pattern(p *tftypes.AttributePath) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, st := range p.Steps() {
		switch st := st.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(st))
		default:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// Main is a TestMain for a package without acceptance tests: it runs the
// tests, then c.Check.
func Main(m *testing.M, c Coverage) {
	code := m.Run()
	if code == 0 {
		if err := c.Check(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// partialRun says the tests were filtered (-run, -skip) or only listed:
// then not every row ran and coverage says nothing.
func partialRun() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}

// Check compares what the tests observed with the checks the schemas and
// sources hold, and describes every check no row reached. It is nil on a
// partial run.
func (c Coverage) Check() error {
	if partialRun() {
		return nil
	}
	observedMu.Lock()
	obs := append([]observation(nil), observed...)
	observedMu.Unlock()
	return c.check(obs)
}

// check is Check against the observations obs.
func (c Coverage) check(obs []observation) error {
	checks, err := c.checks()
	if err != nil {
		return err
	}

	delegated := map[string]string{}
	for _, d := range c.Delegated {
		for _, ch := range walkAttributes("", "", reflect.ValueOf(d.Attributes), "") {
			p := ch.path
			if d.Prefix != "" {
				p = d.Prefix + "." + p
			}
			delegated[p+" "+ch.sig] = d.By
		}
	}
	// A diagnostic of a custom check does not reach a validator at the
	// same path.
	custom := map[string]bool{}
	for _, ch := range checks {
		if ch.summary != "" {
			custom[ch.summary] = true
		}
	}
	var missing, stale []string
	used := map[string]bool{}
	nDelegated := 0
	for _, ch := range checks {
		if ch.summary == "" && delegated[ch.path+" "+ch.sig] != "" {
			nDelegated++
			continue
		}
		if _, ok := c.Exempt[ch.key]; ok {
			used[ch.key] = true
			continue
		}
		if !ch.reached(obs, custom) {
			missing = append(missing, ch.describe())
		}
	}
	tests := map[string]map[string]bool{}
	for k, reason := range c.Exempt {
		if !used[k] {
			stale = append(stale, k)
		}
		name, _, _ := strings.Cut(reason, ":")
		dir, test := ".", name
		if i := strings.LastIndex(name, "."); i > 0 {
			dir, test = name[:i], name[i+1:]
		}
		if tests[dir] == nil {
			found, err := testFuncs(dir)
			if err != nil {
				return err
			}
			tests[dir] = found
		}
		if !tests[dir][test] {
			stale = append(stale, fmt.Sprintf("%s: the reason must start with the name of the test that covers it, "+
				"of this package (\"TestX: why\") or of another directory (\"../controller.TestX: why\"); %q is none", k, name))
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) == 0 && len(stale) == 0 {
		fmt.Printf("protocoltest: %d checks inside nested attributes: %d reached by a row here, %d covered by the shared "+
			"schema's own package, %d exempt\n", len(checks), len(checks)-nDelegated-len(c.Exempt), nDelegated, len(c.Exempt))
		return nil
	}
	var b strings.Builder
	if len(missing) > 0 {
		fmt.Fprintf(&b, "protocoltest: %d of %d checks inside nested attributes have no bad-input row that reaches them "+
			"at their attribute (add a row, or an Exempt entry saying why none can):\n  %s\n",
			len(missing), len(checks), strings.Join(missing, "\n  "))
	}
	if len(stale) > 0 {
		fmt.Fprintf(&b, "protocoltest: wrong exemptions (a check that no longer exists, or no test named):\n  %s\n", strings.Join(stale, "\n  "))
	}
	return fmt.Errorf("%s", b.String())
}

// check is a validated attribute (path set) or a custom check (summary
// set).
type check struct {
	key           string
	kind, typ     string
	path          string // a validated attribute: its pattern
	summary       string // a custom check: its summary
	where         string // a custom check: file:line
	nestedAttr    bool   // the attribute is itself a nested attribute
	validatorKind string
	sig           string // validator kind and descriptions
}

func (ch check) describe() string {
	if ch.summary != "" {
		return fmt.Sprintf("custom check %q (%s)", ch.summary, ch.where)
	}
	return fmt.Sprintf("%s (%s validators)", ch.key, ch.validatorKind)
}

// reached says an observed diagnostic comes from the check: for a
// validated attribute, one of its type at its path or inside it that no
// custom check (a summary in custom) made; for a custom check, one with its
// summary that carries an attribute path.
func (ch check) reached(obs []observation, custom map[string]bool) bool {
	for _, o := range obs {
		if ch.summary != "" {
			if o.summary == ch.summary && o.located {
				return true
			}
			continue
		}
		if o.kind != ch.kind || o.typ != ch.typ || custom[o.summary] {
			continue
		}
		if o.path == ch.path || strings.HasPrefix(o.path, ch.path+"[") || strings.HasPrefix(o.path, ch.path+".") {
			return true
		}
	}
	return false
}

func (c Coverage) checks() ([]check, error) {
	ctx := context.Background()
	p := c.Provider()
	meta := nestedattr.Answer(ctx, p, provider.Provider.Metadata, provider.MetadataRequest{})
	var out []check
	if c.ProviderSchema {
		out = append(out, walkSchema("provider", "", reflect.ValueOf(nestedattr.Answer(ctx, p, provider.Provider.Schema, provider.SchemaRequest{}).Schema))...)
	}
	want := map[string]bool{}
	for _, r := range c.Resources {
		want["resource "+r] = true
	}
	for _, d := range c.DataSources {
		want["data "+d] = true
	}
	out = append(out, served("resource", p.Resources(ctx), want, func(r resource.Resource) (string, any) {
		return nestedattr.Answer(ctx, r, resource.Resource.Metadata, resource.MetadataRequest{ProviderTypeName: meta.TypeName}).TypeName,
			nestedattr.Answer(ctx, r, resource.Resource.Schema, resource.SchemaRequest{}).Schema
	})...)
	out = append(out, served("data", p.DataSources(ctx), want, func(d datasource.DataSource) (string, any) {
		return nestedattr.Answer(ctx, d, datasource.DataSource.Metadata, datasource.MetadataRequest{ProviderTypeName: meta.TypeName}).TypeName,
			nestedattr.Answer(ctx, d, datasource.DataSource.Schema, datasource.SchemaRequest{}).Schema
	})...)
	for k := range want {
		return nil, fmt.Errorf("protocoltest: coverage names %s, which the provider does not serve", k)
	}
	for _, dir := range c.Sources {
		found, err := customChecks(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// served walks the schema of every type the factories build that want
// names (as kind and type name), striking it from want; describe gives a
// type's name and schema.
func served[T any](kind string, factories []func() T, want map[string]bool, describe func(T) (string, any)) []check {
	var out []check
	for _, f := range factories {
		name, schema := describe(f())
		if want[kind+" "+name] {
			delete(want, kind+" "+name)
			out = append(out, walkSchema(kind, name, reflect.ValueOf(schema))...)
		}
	}
	return out
}

// walkSchema lists the validated attributes inside nested attributes of
// a framework schema (resource, data source or provider schema, read by
// reflection: their attribute types differ but share field names), and
// the nested attributes that carry validators themselves.
func walkSchema(kind, typ string, sch reflect.Value) []check {
	return walkAttributes(kind, typ, sch.FieldByName("Attributes"), "")
}

func walkAttributes(kind, typ string, attrs reflect.Value, prefix string) []check {
	var out []check
	for _, k := range attrs.MapKeys() {
		a := attrs.MapIndex(k)
		for a.Kind() == reflect.Interface {
			a = a.Elem()
		}
		name := k.String()
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		add := func(at string, nestedAttr bool, validators reflect.Value) {
			if !validators.IsValid() || validators.Len() == 0 {
				return
			}
			key := strings.Join(strings.Fields(fmt.Sprintf("%s %s %s", kind, typ, at)), " ")
			vk := strings.TrimPrefix(validators.Type().Elem().String(), "validator.")
			descs := []string{vk}
			for i := 0; i < validators.Len(); i++ {
				if d, ok := validators.Index(i).Interface().(interface {
					Description(context.Context) string
				}); ok {
					descs = append(descs, d.Description(context.Background()))
				}
			}
			out = append(out, check{key: key, kind: kind, typ: typ, path: at, nestedAttr: nestedAttr,
				validatorKind: vk, sig: strings.Join(descs, " | ")})
		}
		switch {
		case a.FieldByName("NestedObject").IsValid(): // list, set, map nested
			add(p, true, a.FieldByName("Validators"))
			obj := a.FieldByName("NestedObject")
			add(p+"[*]", true, obj.FieldByName("Validators"))
			out = append(out, walkAttributes(kind, typ, obj.FieldByName("Attributes"), p+"[*]")...)
		case a.FieldByName("Attributes").IsValid(): // single nested
			add(p, true, a.FieldByName("Validators"))
			out = append(out, walkAttributes(kind, typ, a.FieldByName("Attributes"), p)...)
		case prefix != "":
			add(p, false, a.FieldByName("Validators"))
		}
	}
	return out
}

// diagnosticCalls are the framework calls that make a diagnostic with an
// attribute path, and the index of their summary argument.
var diagnosticCalls = map[string]int{
	"AddAttributeError": 1, "AddAttributeWarning": 1,
	"NewAttributeErrorDiagnostic": 1, "NewAttributeWarningDiagnostic": 1,
}

// customChecks reads the non-test Go files of dir for diagnostics with an
// attribute path: calls of diagnosticCalls with a literal summary, and of
// functions that pass one of their parameters on as the summary (one
// level of wrapping, such as a checker's errorf(path, summary, ...)).
func customChecks(dir string) ([]check, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, af)
	}
	calls := map[string]int{}
	for k, v := range diagnosticCalls {
		calls[k] = v
	}
	// Wrappers: a function whose summary argument is its own parameter.
	for _, af := range parsed {
		for _, decl := range af.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			params := map[string]int{}
			i := 0
			for _, f := range fd.Type.Params.List {
				for _, n := range f.Names {
					params[n.Name] = i
					i++
				}
				if len(f.Names) == 0 {
					i++
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				ce, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				idx, ok := diagnosticCalls[calleeName(ce)]
				if !ok || len(ce.Args) <= idx {
					return true
				}
				if id, ok := ce.Args[idx].(*ast.Ident); ok {
					if pi, ok := params[id.Name]; ok {
						calls[fd.Name.Name] = pi
					}
				}
				return true
			})
		}
	}
	var out []check
	seen := map[string]bool{}
	for _, af := range parsed {
		ast.Inspect(af, func(n ast.Node) bool {
			ce, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			idx, ok := calls[calleeName(ce)]
			if !ok || len(ce.Args) <= idx {
				return true
			}
			lit, ok := ce.Args[idx].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true // a wrapper's own call, or a computed summary
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || seen[s] {
				return true
			}
			seen[s] = true
			pos := fset.Position(ce.Pos())
			out = append(out, check{key: s, summary: s, where: fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)})
			return true
		})
	}
	return out, nil
}

// testFuncs are the names of the Test functions in dir's test files.
func testFuncs(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				out[fd.Name.Name] = true
			}
		}
	}
	return out, nil
}

func calleeName(ce *ast.CallExpr) string {
	switch f := ce.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}
