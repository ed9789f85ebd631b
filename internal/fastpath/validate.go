package fastpath

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ValidateResourceConfig as the framework answers it
// (terraform-plugin-framework v1.19.0,
// internal/proto6server/server_validateresourceconfig.go and
// internal/fwserver/server_validateresourceconfig.go):
//
//  1. the configuration decoded against the schema's type (fromproto6;
//     NullifyCollectionBlocks changes nothing: types with list or set
//     blocks are not validated here);
//  2. the resource, configured with the provider's data as the framework
//     holds it (nil before ConfigureProvider); an error stops there;
//  3. the resource's ConfigValidators, then its ValidateConfig;
//  4. the schema walk (SchemaValidate): for every attribute the framework
//     reads its value at its path (a child of a null or unknown object or
//     element reads as null: tftypes.ErrInvalidStep), reports a read-only
//     attribute that is set and a required one that is null, runs the
//     attribute's validators on its converted value, walks a nested
//     attribute's object (known, not null; for lists and maps each
//     element, null and unknown ones included, with the object's
//     validators) unless the attribute already has an error, and warns of
//     a deprecated attribute set to a known value; a single nested block
//     is walked whether null or not, after its validators, unless they
//     returned an error; the schema's own deprecation warning last.
//
// Every diagnostic goes through diag.Diagnostics.Append as in the
// framework, which drops duplicates, and is converted as toproto6 does.
//
// What the fast path does not do is shown to say nothing: values are read
// as tftypes values and converted to the framework's only for the
// attributes that have validators; the framework's conversion of every
// visited attribute (and of everything below it) fails or validates
// anything only for a number that is not an integer within ±2^53
// (Int64Type, Float64Type; numbersOK) or a custom value type (only the
// framework's own types, the timeouts block and tfvalues.WholeNumberType
// are indexed, see validatedType). Such configurations, types the index
// does not support (set nested attributes, list and set blocks,
// write-only, dynamic, Int32/Float32 attributes), a configuration that is
// null, unknown or does not decode, a provider whose Configure failed, and
// any panic go to the framework.

var validations tally

// ValidateCounts returns how many ValidateResourceConfig calls the fast
// path answered and how many it handed to the framework.
func ValidateCounts() (fast, framework int64) { return validations.counts() }

// EligibleValidate reports whether configurations of typeName may be
// validated by the fast path, and if not, why.
func (s *Server) EligibleValidate(ctx context.Context, typeName string) (bool, string) {
	return s.eligible(ctx, typeName, func(ti *typeInfo) (bool, string) { return ti.validateWhy == "", ti.validateWhy })
}

func (s *Server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	defer callStarted()()
	if resp, ok := s.ValidateFast(ctx, req); ok {
		validations.answered.Add(1)
		return resp, nil
	}
	validations.delegated.Add(1)
	return callFramework(ctx, s.FrameworkServer.ValidateResourceConfig, req)
}

// ValidateFast returns the framework's answer to req, and false when the
// fast path cannot show it (the framework must then answer).
func (s *Server) ValidateFast(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (resp *tfprotov6.ValidateResourceConfigResponse, ok bool) {
	if req == nil || req.Config == nil {
		return nil, false
	}
	ti := s.typeInfo(ctx, req.TypeName)
	if ti == nil || ti.validateWhy != "" {
		return nil, false
	}
	var data any
	switch s.configureState.Load() {
	case configureNever:
	case configureOK:
		d, ok := s.providerData()
		if !ok {
			return nil, false
		}
		data = d
	default:
		return nil, false
	}
	config, known := knownValue(req.Config, ti.tfType)
	if !known || !numbersOK(config) {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			resp, ok = nil, false
		}
	}()
	diags := validateConfig(ctx, ti, data, req.ClientCapabilities, config)
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: protoDiagnostics(ctx, diags)}, true
}

// Configure states, for the provider data the framework hands resources.
const (
	configureNever  = iota // nil
	configureOK            // providerData()
	configureFailed        // the framework's is not known here
)

func validateConfig(ctx context.Context, ti *typeInfo, data any, caps *tfprotov6.ValidateResourceConfigClientCapabilities, config tftypes.Value) diag.Diagnostics {
	var diags diag.Diagnostics
	r := ti.factory()
	if rc, ok := r.(resource.ResourceWithConfigure); ok {
		cresp := resource.ConfigureResponse{}
		rc.Configure(ctx, resource.ConfigureRequest{ProviderData: data}, &cresp)
		diags.Append(cresp.Diagnostics...)
		if diags.HasError() {
			return diags
		}
	}
	rcaps := resource.ValidateConfigClientCapabilities{}
	if caps != nil {
		rcaps.WriteOnlyAttributesAllowed = caps.WriteOnlyAttributesAllowed
	}
	cfg := tfsdk.Config{Raw: config, Schema: ti.schema}
	vreqR := resource.ValidateConfigRequest{ClientCapabilities: rcaps, Config: cfg}
	if rv, ok := r.(resource.ResourceWithConfigValidators); ok {
		for _, cv := range rv.ConfigValidators(ctx) {
			vresp := &resource.ValidateConfigResponse{}
			cv.ValidateResource(ctx, vreqR, vresp)
			diags.Append(vresp.Diagnostics...)
		}
	}
	if rv, ok := r.(resource.ResourceWithValidateConfig); ok {
		vresp := &resource.ValidateConfigResponse{}
		rv.ValidateConfig(ctx, vreqR, vresp)
		diags.Append(vresp.Diagnostics...)
	}
	w := vwalk{ctx: ctx, caps: validator.ValidateSchemaClientCapabilities{WriteOnlyAttributesAllowed: rcaps.WriteOnlyAttributesAllowed}, config: cfg, out: diags}
	w.object(ti.validate, config, nil)
	if m := ti.schema.GetDeprecationMessage(); m != "" {
		w.out.AddWarning("Deprecated", m)
	}
	return w.out
}

// vwalk is one walk of a configuration over the validation index.
type vwalk struct {
	ctx    context.Context
	caps   validator.ValidateSchemaClientCapabilities
	config tfsdk.Config
	out    diag.Diagnostics
}

// pnode is an attribute path built only when a diagnostic or a validator
// needs it.
type pnode struct {
	parent *pnode
	kind   uint8 // stepName, stepIndex, stepKey
	name   string
	index  int
}

const (
	stepName = iota
	stepIndex
	stepKey
)

func (p *pnode) path() path.Path { return walkTo(p, path.Root) }

func (p *pnode) expr() path.Expression { return walkTo(p, path.MatchRoot) }

// steps is a path.Path or a path.Expression, which are built alike.
type steps[T any] interface {
	AtListIndex(int) T
	AtMapKey(string) T
	AtName(string) T
}

// walkTo is the path or expression (root: path.Root or path.MatchRoot)
// of p.
func walkTo[T steps[T]](p *pnode, root func(string) T) T {
	if p.parent == nil {
		return root(p.name)
	}
	at := walkTo(p.parent, root)
	switch p.kind {
	case stepIndex:
		return at.AtListIndex(p.index)
	case stepKey:
		return at.AtMapKey(p.name)
	}
	return at.AtName(p.name)
}

func (w *vwalk) req(p *pnode) vreq {
	return vreq{caps: w.caps, config: w.config, path: p.path(), expr: p.expr()}
}

// object walks the attributes and blocks of one object value: the
// configuration, a nested attribute's object or element, a block.
func (w *vwalk) object(nodes []*vnode, v tftypes.Value, p *pnode) {
	for _, n := range nodes {
		np := &pnode{parent: p, kind: stepName, name: n.name}
		cv := field(v, n.name)
		if n.block {
			w.block(n, cv, np)
		} else {
			w.attribute(n, cv, np)
		}
	}
}

// field is what fwschemadata.Data.ValueAtPath reads for a child: the zero
// tftypes.Value (read as null) when the object is null or unknown.
func field(obj tftypes.Value, name string) tftypes.Value {
	if obj.IsNull() || !obj.IsKnown() {
		return tftypes.Value{}
	}
	x, err := obj.ApplyTerraform5AttributePathStep(tftypes.AttributeName(name))
	if err != nil {
		return tftypes.Value{}
	}
	v, ok := x.(tftypes.Value)
	if !ok {
		panic(bail{"not a tftypes value"})
	}
	return v
}

// convert is fwschemadata.Data.ValueAtPath's conversion of a value read
// at a path.
func (w *vwalk) convert(t attr.Type, v tftypes.Value, p *pnode) attr.Value {
	av, err := tfvalues.ValueFromTerraform(w.ctx, t, v)
	if err != nil {
		panic(bail{"conversion: " + err.Error()})
	}
	if _, ok := av.(xattr.ValidateableAttribute); ok {
		panic(bail{"value validates itself"})
	}
	//nolint:staticcheck // the framework still calls it
	if tv, ok := t.(xattr.TypeWithValidate); ok {
		if d := tv.Validate(w.ctx, v, p.path()); len(d) > 0 {
			panic(bail{"type validation diagnostics"})
		}
	}
	return av
}

func (w *vwalk) attribute(n *vnode, v tftypes.Value, p *pnode) {
	var local diag.Diagnostics
	null, unknown := v.IsNull(), !v.IsKnown()
	if n.computed && !n.optional && !null {
		local.AddAttributeError(p.path(),
			"Invalid Configuration for Read-Only Attribute",
			"Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.\n\n"+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable and read-only attributes that are supported.",
		)
	}
	if n.required && null {
		pp := p.path()
		local.AddAttributeError(pp,
			"Missing Configuration for Required Attribute",
			fmt.Sprintf("Must set a configuration value for the %s attribute as the provider has marked it as required.\n\n", pp.String())+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable attributes that are required.",
		)
	}
	var av attr.Value
	if n.validate != nil || (n.nesting == nestSingle && n.objValidate != nil && !null && !unknown) {
		av = w.convert(n.typ, v, p)
	}
	if n.validate != nil {
		n.validate(w.ctx, av, w.req(p), &local)
	}
	w.out.Append(local...)
	if n.nesting != nestNone && !local.HasError() {
		w.nested(n, v, av, p)
	}
	if n.deprecation != "" && !null && !unknown {
		w.out.AddAttributeWarning(p.path(), "Attribute Deprecated", n.deprecation)
	}
}

// nested is AttributeValidateNestedAttributes.
func (w *vwalk) nested(n *vnode, v tftypes.Value, av attr.Value, p *pnode) {
	if v.IsNull() || !v.IsKnown() {
		// A null or unknown single object is skipped; a null or unknown
		// list or map has no elements.
		return
	}
	switch n.nesting {
	case nestSingle:
		if n.objValidate != nil {
			n.objValidate(w.ctx, toObject(w.ctx, av), w.req(p), &w.out)
		}
		w.object(n.children, v, p)
	case nestList:
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			panic(bail{"list: " + err.Error()})
		}
		for i, e := range elems {
			ep := &pnode{parent: p, kind: stepIndex, index: i}
			w.element(n, e, ep)
		}
	case nestMap:
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			panic(bail{"map: " + err.Error()})
		}
		for k, e := range elems {
			ep := &pnode{parent: p, kind: stepKey, name: k}
			w.element(n, e, ep)
		}
	}
}

// element is NestedAttributeObjectValidate for one element of a list or
// map nested attribute.
func (w *vwalk) element(n *vnode, e tftypes.Value, ep *pnode) {
	if n.objValidate != nil {
		ev, err := tfvalues.ValueFromTerraform(w.ctx, n.elemType, e)
		if err != nil {
			panic(bail{"element: " + err.Error()})
		}
		n.objValidate(w.ctx, toObject(w.ctx, ev), w.req(ep), &w.out)
	}
	w.object(n.children, e, ep)
}

// block is BlockValidate of a single nested block.
func (w *vwalk) block(n *vnode, v tftypes.Value, p *pnode) {
	var local diag.Diagnostics
	var av attr.Value
	if n.validate != nil || n.objValidate != nil {
		av = w.convert(n.typ, v, p)
	}
	if n.validate != nil {
		n.validate(w.ctx, av, w.req(p), &local)
	}
	w.out.Append(local...)
	if local.HasError() {
		return
	}
	// NestedBlockObjectValidate, null or not.
	if n.objValidate != nil {
		n.objValidate(w.ctx, toObject(w.ctx, av), w.req(p), &w.out)
	}
	w.object(n.children, v, p)
	if n.deprecation != "" && !v.IsNull() && v.IsKnown() {
		w.out.AddAttributeWarning(p.path(), "Block Deprecated", n.deprecation)
	}
}

// allNumbersOK reports whether every value of elems is numbersOK.
func allNumbersOK(elems iter.Seq[tftypes.Value]) bool {
	for e := range elems {
		if !numbersOK(e) {
			return false
		}
	}
	return true
}

// maxExact is the largest integer every number type of the index converts
// and validates without a word (Float64Type: 2^53).
var maxExact = new(big.Float).SetInt64(1 << 53)

// numbersOK reports whether every known number in v is an integer within
// ±2^53: then the framework's conversions of Int64, Float64 and Number
// values (and of anything holding them) neither fail nor validate
// anything.
func numbersOK(v tftypes.Value) bool {
	if v.IsNull() || !v.IsKnown() {
		return true
	}
	switch t := v.Type().(type) {
	case tftypes.Object:
		for name := range t.AttributeTypes {
			x, err := v.ApplyTerraform5AttributePathStep(tftypes.AttributeName(name))
			if err != nil {
				return false
			}
			e, ok := x.(tftypes.Value)
			if !ok || !numbersOK(e) {
				return false
			}
		}
		return true
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var elems []tftypes.Value
		return !hasNumber(v.Type()) || (v.As(&elems) == nil && allNumbersOK(slices.Values(elems)))
	case tftypes.Map:
		var elems map[string]tftypes.Value
		return !hasNumber(v.Type()) || (v.As(&elems) == nil && allNumbersOK(maps.Values(elems)))
	}
	if !v.Type().Is(tftypes.Number) {
		return true
	}
	var f *big.Float
	if v.As(&f) != nil || f == nil || !f.IsInt() {
		return false
	}
	return new(big.Float).Abs(f).Cmp(maxExact) <= 0
}

// hasNumber reports whether values of t can hold a number.
func hasNumber(t tftypes.Type) bool {
	return typeHas(t, func(t tftypes.Type) bool { return t.Is(tftypes.Number) || t.Is(tftypes.DynamicPseudoType) })
}

// typeHas reports whether leaf holds for a primitive or dynamic type in t.
func typeHas(t tftypes.Type, leaf func(tftypes.Type) bool) bool {
	switch t := t.(type) {
	case tftypes.Object:
		for _, at := range t.AttributeTypes {
			if typeHas(at, leaf) {
				return true
			}
		}
		return false
	case tftypes.List:
		return typeHas(t.ElementType, leaf)
	case tftypes.Set:
		return typeHas(t.ElementType, leaf)
	case tftypes.Map:
		return typeHas(t.ElementType, leaf)
	case tftypes.Tuple:
		for _, et := range t.ElementTypes {
			if typeHas(et, leaf) {
				return true
			}
		}
		return false
	}
	return leaf(t)
}

// protoDiagnostics is toproto6.Diagnostics.
func protoDiagnostics(ctx context.Context, diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Detail: d.Detail(), Severity: protoSeverity(d.Severity()), Summary: d.Summary()}
		if dp, ok := d.(diag.DiagnosticWithPath); ok {
			ap, err := protoPath(ctx, dp.Path())
			if err != nil {
				out = append(out, &tfprotov6.Diagnostic{
					Severity: tfprotov6.DiagnosticSeverityError,
					Summary:  "Unable to Convert Attribute Path",
					Detail: "An unexpected error occurred while trying to convert an attribute path. " +
						"This is either an error in terraform-plugin-framework or a custom attribute type used by the provider. " +
						"Please report the following to the provider developers.\n\n" +
						fmt.Sprintf("Attribute Path: %s\n", dp.Path().String()) +
						fmt.Sprintf("Original Error: %s", err),
				})
			}
			pd.Attribute = ap
		}
		out = append(out, pd)
	}
	return out
}

func protoSeverity(s diag.Severity) tfprotov6.DiagnosticSeverity {
	switch s {
	case diag.SeverityError:
		return tfprotov6.DiagnosticSeverityError
	case diag.SeverityWarning:
		return tfprotov6.DiagnosticSeverityWarning
	}
	return tfprotov6.DiagnosticSeverityInvalid
}

// protoPath is totftypes.AttributePath.
func protoPath(ctx context.Context, p path.Path) (*tftypes.AttributePath, error) {
	var steps []tftypes.AttributePathStep
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case path.PathStepAttributeName:
			steps = append(steps, tftypes.AttributeName(string(s)))
		case path.PathStepElementKeyInt:
			steps = append(steps, tftypes.ElementKeyInt(int64(s)))
		case path.PathStepElementKeyString:
			steps = append(steps, tftypes.ElementKeyString(string(s)))
		case path.PathStepElementKeyValue:
			tv, err := s.ToTerraformValue(ctx)
			if err != nil {
				return nil, fmt.Errorf("unable to convert attr.Value (%s) to tftypes.Value: %w", s.String(), err)
			}
			steps = append(steps, tftypes.ElementKeyValue(tv))
		default:
			return nil, fmt.Errorf("unknown path.PathStep: %#v", step)
		}
	}
	return tftypes.NewAttributePathWithSteps(steps), nil
}
