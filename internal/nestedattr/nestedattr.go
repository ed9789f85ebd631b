// Package nestedattr is the outermost layer of the provider's protocol
// server. It makes two kinds of diagnostic readable that Terraform and the
// framework would otherwise garble for nested attributes
// (`pod_template = { containers = [{ ... }] }`):
//
//   - Where. Every Terraform and OpenTofu release the project supports finds
//     the line of a diagnostic by walking the path through blocks only
//     (tfdiags.attributeDiagnostic.ElaborateFromConfigBody and
//     traversePathSteps in internal/tfdiags/contextual.go, the same in
//     Terraform v1.11.4 and v1.13.3 and OpenTofu v1.12.6;
//     hashicorp/terraform#33491 is open). For a path inside a nested
//     attribute it gives up at the first step and looks the last attribute
//     name up in the resource's own body: an error at
//     pod_template.containers[0].name quotes the resource's `name = ...`
//     line, one at ...image quotes the resource's first line. The protocol
//     path stays exact (editors and the tests read it); this layer writes it
//     into the text too, and says so when the quoted line is another
//     attribute of the same name.
//   - A fraction in a nested integer (`replicas = 1.5` inside an object).
//     The framework fails to convert it and reports "This is always an error
//     in the provider ... Value %!s(*big.Float=1.5) is not an integer"
//     (terraform-plugin-framework v1.19). Top-level integers have
//     tfvalues.WholeNumberType, which reports it properly; nested ones keep
//     the framework's type (see tfvalues.wholeNumbers), so this layer finds
//     such fractions in the configuration before the framework reads it and
//     answers with the same words as WholeNumberType (tfvalues.FractionDetail).
//
// Nothing here stands in for a library: it only rewrites what the framework
// answers or answers first with a plain refusal, and every other call passes
// through unchanged.
package nestedattr

import (
	"context"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// Inner is the server this layer is in front of: the protocol server with
// every optional service the framework's has, so that none is lost.
type Inner interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

// Server is Inner with readable diagnostics for nested attributes.
type Server struct {
	Inner

	provider    shape
	resources   map[string]shape
	dataSources map[string]shape
}

// shape is what this layer needs of one schema.
type shape struct {
	typ tftypes.Type
	// attrs is the framework's type of the whole configuration (an object).
	attrs attr.Type
	// topLevel holds the names of the schema's own attributes; blocks the
	// names of its blocks (Terraform locates paths through blocks).
	topLevel, blocks map[string]bool
	// nestedInts says a nested integer attribute exists (one that the
	// framework's own type converts), so a configuration may hold a
	// fraction this layer must find.
	nestedInts bool
}

// New puts the layer in front of inner, which serves p.
func New(inner Inner, p provider.Provider) *Server {
	ctx := context.Background()
	s := &Server{Inner: inner, resources: map[string]shape{}, dataSources: map[string]shape{}}
	meta := Answer(ctx, p, provider.Provider.Metadata, provider.MetadataRequest{})
	s.provider = shapeOf(ctx, Answer(ctx, p, provider.Provider.Schema, provider.SchemaRequest{}).Schema)
	for _, f := range p.Resources(ctx) {
		r := f()
		m := Answer(ctx, r, resource.Resource.Metadata, resource.MetadataRequest{ProviderTypeName: meta.TypeName})
		s.resources[m.TypeName] = shapeOf(ctx, Answer(ctx, r, resource.Resource.Schema, resource.SchemaRequest{}).Schema)
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		m := Answer(ctx, d, datasource.DataSource.Metadata, datasource.MetadataRequest{ProviderTypeName: meta.TypeName})
		s.dataSources[m.TypeName] = shapeOf(ctx, Answer(ctx, d, datasource.DataSource.Schema, datasource.SchemaRequest{}).Schema)
	}
	return s
}

// Answer is the response of one of the framework's methods of x (such as
// resource.Resource.Schema) to req.
func Answer[T, Req, Resp any](ctx context.Context, x T, method func(T, context.Context, Req, *Resp), req Req) Resp {
	var resp Resp
	method(x, ctx, req, &resp)
	return resp
}

// frameworkSchema is the framework's schema of a provider, resource or
// data source (the Schema of each package).
type frameworkSchema[A, B any] interface {
	Type() attr.Type
	GetAttributes() map[string]A
	GetBlocks() map[string]B
}

func shapeOf[A, B any](ctx context.Context, s frameworkSchema[A, B]) shape {
	t := s.Type()
	sh := shape{typ: t.TerraformType(ctx), attrs: t, topLevel: map[string]bool{}, blocks: map[string]bool{}}
	for name := range s.GetAttributes() {
		sh.topLevel[name] = true
	}
	for name := range s.GetBlocks() {
		sh.blocks[name] = true
	}
	if o, ok := t.(attr.TypeWithAttributeTypes); ok {
		for name, at := range o.AttributeTypes() {
			if hasInt(at) && !sh.blocks[name] {
				sh.nestedInts = true
			}
		}
	}
	return sh
}

// hasInt says t is or holds an integer of the framework's own type (one
// WholeNumberType does not cover).
func hasInt(t attr.Type) bool {
	switch t := t.(type) {
	case tfvalues.WholeNumberType:
		return false
	case basetypes.Int64Typable:
		return true
	case attr.TypeWithAttributeTypes:
		for _, at := range t.AttributeTypes() {
			if hasInt(at) {
				return true
			}
		}
	case attr.TypeWithElementType:
		return hasInt(t.ElementType())
	case attr.TypeWithElementTypes:
		for _, et := range t.ElementTypes() {
			if hasInt(et) {
				return true
			}
		}
	}
	return false
}

// Fractions returns an error diagnostic for every known number with a
// fractional part where t (the framework's type of v) wants an integer of
// the framework's own type.
func Fractions(t attr.Type, v tftypes.Value) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	fractions(t, v, tftypes.NewAttributePath(), &out)
	return out
}

func fractions(t attr.Type, v tftypes.Value, p *tftypes.AttributePath, out *[]*tfprotov6.Diagnostic) {
	if !v.IsKnown() || v.IsNull() {
		return
	}
	switch t := t.(type) {
	case tfvalues.WholeNumberType:
		// Reported by the type itself, at validation.
	case basetypes.Int64Typable:
		var f big.Float
		if v.As(&f) == nil && !f.IsInt() {
			given := f.Text('g', -1)
			*out = append(*out, &tfprotov6.Diagnostic{
				Severity:  tfprotov6.DiagnosticSeverityError,
				Summary:   "Not a whole number",
				Detail:    tfvalues.FractionDetail(Render(p), given),
				Attribute: p,
			})
		}
	case attr.TypeWithAttributeTypes:
		var m map[string]tftypes.Value
		if v.As(&m) != nil {
			return
		}
		for name, at := range t.AttributeTypes() {
			if ev, ok := m[name]; ok {
				fractions(at, ev, p.WithAttributeName(name), out)
			}
		}
	case attr.TypeWithElementType:
		et := t.ElementType()
		switch {
		case v.Type().Is(tftypes.Map{}):
			var m map[string]tftypes.Value
			if v.As(&m) == nil {
				for k, ev := range m {
					fractions(et, ev, p.WithElementKeyString(k), out)
				}
			}
		case v.Type().Is(tftypes.Set{}):
			var l []tftypes.Value
			if v.As(&l) == nil {
				for _, ev := range l {
					fractions(et, ev, p.WithElementKeyValue(ev), out)
				}
			}
		default:
			var l []tftypes.Value
			if v.As(&l) == nil {
				for i, ev := range l {
					fractions(et, ev, p.WithElementKeyInt(i), out)
				}
			}
		}
	case attr.TypeWithElementTypes:
		var l []tftypes.Value
		if v.As(&l) == nil {
			ets := t.ElementTypes()
			for i, ev := range l {
				if i < len(ets) {
					fractions(ets[i], ev, p.WithElementKeyInt(i), out)
				}
			}
		}
	}
}

// Render writes a protocol attribute path the way a configuration spells
// it: pod_template.containers[0].env[1].name, labels["team"],
// node_locations["europe-west1-b"] (a set element, by its value when it is
// a string).
func Render(p *tftypes.AttributePath) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyInt:
			b.WriteString("[" + strconv.FormatInt(int64(s), 10) + "]")
		case tftypes.ElementKeyString:
			b.WriteString("[" + strconv.Quote(string(s)) + "]")
		case tftypes.ElementKeyValue:
			var v string
			if err := tftypes.Value(s).As(&v); err == nil {
				b.WriteString("[" + strconv.Quote(v) + "]")
			} else {
				b.WriteString("[?]")
			}
		}
	}
	return b.String()
}

// Locate writes the path of every diagnostic Terraform cannot quote the
// line of into its text (see the package comment), unless its summary or
// detail already names it.
func (sh shape) Locate(diags []*tfprotov6.Diagnostic) {
	for _, d := range diags {
		if d == nil || d.Attribute == nil {
			continue
		}
		steps := d.Attribute.Steps()
		// Terraform locates a final index itself (labels["team"]).
		for len(steps) > 0 {
			if _, ok := steps[len(steps)-1].(tftypes.AttributeName); ok {
				break
			}
			steps = steps[:len(steps)-1]
		}
		if len(steps) < 2 {
			continue
		}
		first, ok := steps[0].(tftypes.AttributeName)
		if !ok || sh.blocks[string(first)] {
			continue
		}
		where := Render(d.Attribute)
		if strings.Contains(d.Summary, where) || strings.Contains(d.Detail, where) {
			continue
		}
		text := "At " + where + ": " + d.Detail
		if last, ok := steps[len(steps)-1].(tftypes.AttributeName); ok && sh.topLevel[string(last)] {
			text += "\n\n(The line quoted above is the resource's own `" + string(last) + "`: Terraform cannot yet " +
				"quote a line inside a nested attribute, hashicorp/terraform#33491. The error is at " + where + ".)"
		}
		d.Detail = text
	}
}
