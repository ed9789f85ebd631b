package fastpath

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// InertWhenUnchanged is implemented by a provider's own plan modifiers that
// change nothing and say nothing when their attribute's planned value
// equals its prior value and the prior private state is empty or holds
// only the fast path's read marker: on the plan of an unchanged resource,
// and on the plan of an update that leaves that attribute (and, for a
// modifier below the top level, the top-level attribute holding it) as it
// was (update.go). A resource type whose schema
// holds any other plan modifier than these and the framework's own
// UseStateForUnknown and RequiresReplace/RequiresReplaceIf (which return
// early on an unchanged value) is never answered by the fast path.
type InertWhenUnchanged interface {
	InertWhenUnchanged()
}

// inertModifiers are the framework's plan modifiers that change nothing on
// an unchanged value: UseStateForUnknown acts only on unknown planned
// values (an unchanged plan has none), RequiresReplace and RequiresReplaceIf
// return before anything else when the planned value equals the state
// (terraform-plugin-framework v1.19, resource/schema/*planmodifier).
var inertModifiers = typesOf(
	boolplanmodifier.UseStateForUnknown(), boolplanmodifier.RequiresReplace(),
	float64planmodifier.UseStateForUnknown(), float64planmodifier.RequiresReplace(),
	int64planmodifier.UseStateForUnknown(), int64planmodifier.RequiresReplace(),
	listplanmodifier.UseStateForUnknown(), listplanmodifier.RequiresReplace(),
	mapplanmodifier.UseStateForUnknown(), mapplanmodifier.RequiresReplace(),
	objectplanmodifier.UseStateForUnknown(), objectplanmodifier.RequiresReplace(),
	setplanmodifier.UseStateForUnknown(), setplanmodifier.RequiresReplace(),
	stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace(),
)

// staticDefaults are the framework's constant defaults: their value does
// not depend on the path or anything else, so it is computed once.
var staticDefaults = typesOf(
	booldefault.StaticBool(false), int64default.StaticInt64(0), stringdefault.StaticString(""),
	listdefault.StaticValue(types.ListNull(types.StringType)), mapdefault.StaticValue(types.MapNull(types.StringType)),
	objectdefault.StaticValue(types.ObjectNull(nil)),
)

func typesOf(vs ...any) map[reflect.Type]bool {
	m := make(map[reflect.Type]bool, len(vs))
	for _, v := range vs {
		m[reflect.TypeOf(v)] = true
	}
	return m
}

// typeInfo is what the fast path needs to know about one resource type,
// derived once from its schema.
type typeInfo struct {
	factory func() resource.Resource
	schema  schema.Schema
	tfType  tftypes.Type
	version int64
	// defaults are the attributes with a schema default at or below them.
	defaults []*node
	// planOK says whether unchanged plans of this type may be answered by
	// the fast path; why says why not.
	planOK bool
	why    string
	// create is the create index (schema_create.go); createOK says
	// whether plans of creates may be answered, createWhy why not.
	create    []*cnode
	createOK  bool
	createWhy string
	// update are the top-level attributes and blocks with plan modifiers
	// at or below them and what those do to an update (update.go);
	// updateWhy says why plans of updates are left to the framework (""
	// when they are not).
	update    []umod
	updateWhy string
	// validate is the validation index (validate_index.go); validateWhy
	// says why configurations are not validated by the fast path ("" when
	// they are).
	validate    []*vnode
	validateWhy string
	// destroyOK says whether plans of destroys may be answered by the
	// fast path (destroy.go): the type has no identity.
	destroyOK bool
	// readInProcessOK says whether markApplied may run the type's Read
	// itself (readInProcess) instead of the framework's ReadResource: no
	// identity, and no type in the schema with semantic equality.
	readInProcessOK bool
}

// nesting of a node's children.
const (
	nestNone = iota
	nestSingle
	nestList
	nestMap
	nestSet
)

// nested is what the schema walkers read of a nested attribute: its
// nesting, its object's attributes, the plan modifiers of its object (a
// single nested attribute's own) and the object whose validators the
// framework runs (GetNestedObject).
type nested struct {
	nesting   int
	attrs     map[string]schema.Attribute
	modifiers any
	object    any
}

// nestedOf returns what a nested attribute nests; false for any other.
func nestedOf(a schema.Attribute) (nested, bool) {
	switch a := a.(type) {
	case schema.SingleNestedAttribute:
		return nested{nestSingle, a.Attributes, a.PlanModifiers, a.GetNestedObject()}, true
	case schema.ListNestedAttribute:
		return nested{nestList, a.NestedObject.Attributes, a.NestedObject.PlanModifiers, a.GetNestedObject()}, true
	case schema.MapNestedAttribute:
		return nested{nestMap, a.NestedObject.Attributes, a.NestedObject.PlanModifiers, a.GetNestedObject()}, true
	case schema.SetNestedAttribute:
		return nested{nestSet, a.NestedObject.Attributes, a.NestedObject.PlanModifiers, a.GetNestedObject()}, true
	}
	return nested{}, false
}

// node is an attribute with a default at or below it.
type node struct {
	name     string
	def      *tftypes.Value // the default, nil when only attributes below have one
	nesting  int
	children []*node
}

func newTypeInfo(ctx context.Context, factory func() resource.Resource) *typeInfo {
	r := factory()
	var sresp resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sresp)
	ti := &typeInfo{factory: factory, schema: sresp.Schema, version: sresp.Schema.Version}
	if sresp.Diagnostics.HasError() {
		ti.why = "schema has errors"
		ti.createWhy = ti.why
		ti.updateWhy = ti.why
		ti.validateWhy = ti.why
		return ti
	}
	ti.tfType = sresp.Schema.Type().TerraformType(ctx)
	if len(sresp.Diagnostics) > 0 {
		ti.validateWhy = "schema has diagnostics"
	} else {
		ti.validate, ti.validateWhy = validateIndex(ctx, sresp.Schema)
	}
	if _, ok := r.(resource.ResourceWithIdentity); ok {
		ti.why = "resource has an identity"
		ti.createWhy = ti.why
		ti.updateWhy = ti.why
		return ti
	}
	ti.destroyOK = true
	ti.readInProcessOK = !semanticEquality(ctx, sresp.Schema.Type())
	ti.create, ti.createWhy = createIndex(ctx, sresp.Schema)
	ti.createOK = ti.createWhy == ""
	ti.update, ti.updateWhy = updateIndex(sresp.Schema, ti.createWhy)
	ti.defaults, ti.why = walkSchema(&walker{schemaWalk{ctx: ctx}}, sresp.Schema)
	ti.planOK = ti.why == ""
	return ti
}

// walker collects defaults and checks that every plan modifier, default
// and attribute kind of a schema is one the fast path understands.
type walker struct{ schemaWalk }

// schemaWalk is what every schema walker (those of schema.go,
// schema_create.go and validate_index.go) holds: the context, and the
// first reason it found to leave a type to the framework.
type schemaWalk struct {
	ctx context.Context
	why string
}

func (r *schemaWalk) refuse(at, format string, args ...any) {
	if r.why == "" {
		r.why = at + ": " + fmt.Sprintf(format, args...)
	}
}

func (r *schemaWalk) refusal() string { return r.why }

// nodeWalker is a schema walker: the node of an attribute or a block of
// an object at path p (nil: nothing to keep), and its first refusal.
type nodeWalker[N any] interface {
	attribute(name, p string, a schema.Attribute) *N
	block(name, p string, b schema.Block) *N
	refusal() string
}

// walkSchema walks the attributes and blocks of s with w: the nodes it
// keeps, and why the type is left to the framework ("" when it is not).
func walkSchema[N any](w nodeWalker[N], s schema.Schema) ([]*N, string) {
	nodes := walkObject(w, s.Attributes, s.Blocks, "")
	return nodes, w.refusal()
}

// walkObject walks the attributes, then the blocks, of an object of a
// schema whose path is at (ending in "." below the root), and keeps the
// nodes w's attribute and block return.
func walkObject[N any](w nodeWalker[N], attrs map[string]schema.Attribute, blocks map[string]schema.Block, at string) []*N {
	var out []*N
	for name, a := range attrs {
		if n := w.attribute(name, at+name, a); n != nil {
			out = append(out, n)
		}
	}
	for name, b := range blocks {
		if n := w.block(name, at+name, b); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// unplanned refuses the attributes no plan fast path answers for:
// write-only and dynamic ones.
func (r *schemaWalk) unplanned(p string, a schema.Attribute) bool {
	if a.IsWriteOnly() {
		r.refuse(p, "write-only attribute")
		return true
	}
	if _, ok := a.(schema.DynamicAttribute); ok {
		r.refuse(p, "dynamic attribute")
		return true
	}
	return false
}

func (w *walker) attribute(name, p string, a schema.Attribute) *node {
	if w.unplanned(p, a) {
		return nil
	}
	w.modifiers(p, planModifiers(a), markedUnchanged)
	n := &node{name: name}
	if d, ok := w.defaultValue(p, a); ok {
		n.def = &d
	}
	if nd, ok := nestedOf(a); ok {
		w.modifiers(p, nd.modifiers, markedUnchanged)
		children := walkObject(w, nd.attrs, nil, p+".")
		if nd.nesting != nestSet {
			n.nesting, n.children = nd.nesting, children
		} else if len(children) > 0 {
			// The framework looks a set element's configuration up by the
			// planned element's value; not mirrored here.
			w.refuse(p, "default inside a set")
		}
	}
	if n.def == nil && len(n.children) == 0 {
		return nil
	}
	return n
}

func (w *walker) block(name, p string, b schema.Block) *node {
	n := &node{name: name}
	switch b := b.(type) {
	case schema.SingleNestedBlock:
		w.modifiers(p, b.PlanModifiers, markedUnchanged)
		n.nesting = nestSingle
		n.children = walkObject(w, b.Attributes, b.Blocks, p+".")
	case schema.ListNestedBlock:
		w.modifiers(p, b.PlanModifiers, markedUnchanged)
		w.modifiers(p, b.NestedObject.PlanModifiers, markedUnchanged)
		n.nesting = nestList
		n.children = walkObject(w, b.NestedObject.Attributes, b.NestedObject.Blocks, p+".")
	case schema.SetNestedBlock:
		w.modifiers(p, b.PlanModifiers, markedUnchanged)
		w.modifiers(p, b.NestedObject.PlanModifiers, markedUnchanged)
		if len(walkObject(w, b.NestedObject.Attributes, b.NestedObject.Blocks, p+".")) > 0 {
			w.refuse(p, "default inside a set")
		}
	default:
		w.refuse(p, "block kind %T", b)
	}
	if len(n.children) == 0 {
		return nil
	}
	return n
}

// modifiers refuses each plan modifier of list (a slice of modifiers of
// any kind) that is neither one of the framework's known to do nothing
// (inertModifiers) nor marked by the provider (markedUnchanged,
// markedOnCreate).
func (r *schemaWalk) modifiers(p string, list any, marked func(any) bool) {
	v := reflect.ValueOf(list)
	for i := 0; v.Kind() == reflect.Slice && i < v.Len(); i++ {
		if m := v.Index(i).Interface(); !marked(m) && !inertModifiers[reflect.TypeOf(m)] {
			r.refuse(p, "plan modifier %T", m)
		}
	}
}

// markedUnchanged reports a plan modifier the provider marked
// InertWhenUnchanged.
func markedUnchanged(m any) bool { _, ok := m.(InertWhenUnchanged); return ok }

// planModifiers returns an attribute's plan modifiers, whatever its kind.
func planModifiers(a schema.Attribute) any {
	switch a := a.(type) {
	case interface{ BoolPlanModifiers() []planmodifier.Bool }:
		return a.BoolPlanModifiers()
	case interface{ Float32PlanModifiers() []planmodifier.Float32 }:
		return a.Float32PlanModifiers()
	case interface{ Float64PlanModifiers() []planmodifier.Float64 }:
		return a.Float64PlanModifiers()
	case interface{ Int32PlanModifiers() []planmodifier.Int32 }:
		return a.Int32PlanModifiers()
	case interface{ Int64PlanModifiers() []planmodifier.Int64 }:
		return a.Int64PlanModifiers()
	case interface{ ListPlanModifiers() []planmodifier.List }:
		return a.ListPlanModifiers()
	case interface{ MapPlanModifiers() []planmodifier.Map }:
		return a.MapPlanModifiers()
	case interface{ NumberPlanModifiers() []planmodifier.Number }:
		return a.NumberPlanModifiers()
	case interface{ ObjectPlanModifiers() []planmodifier.Object }:
		return a.ObjectPlanModifiers()
	case interface{ SetPlanModifiers() []planmodifier.Set }:
		return a.SetPlanModifiers()
	case interface{ StringPlanModifiers() []planmodifier.String }:
		return a.StringPlanModifiers()
	}
	return nil
}

// defaultValue is the Terraform value of an attribute's default, when it
// has one; an attribute with a default the fast path cannot compute once
// makes the type ineligible.
func (w *schemaWalk) defaultValue(p string, a schema.Attribute) (tftypes.Value, bool) {
	ctx := w.ctx
	d, run := defaultOf(ctx, a)
	if d == nil {
		if hasAnyDefault(a) {
			w.refuse(p, "default of kind %T", a)
		}
		return tftypes.Value{}, false
	}
	if !staticDefaults[reflect.TypeOf(d)] {
		w.refuse(p, "default %T", d)
		return tftypes.Value{}, false
	}
	val, ok := run()
	if !ok {
		w.refuse(p, "default has errors")
		return tftypes.Value{}, false
	}
	tv, err := val.ToTerraformValue(ctx)
	if err != nil {
		w.refuse(p, "default: %v", err)
		return tftypes.Value{}, false
	}
	return tv, true
}

// defaultOf returns an attribute's default of the kinds defaultValue
// computes, and what runs it; nil when it has none.
func defaultOf(ctx context.Context, a schema.Attribute) (any, func() (tfValuer, bool)) {
	switch a := a.(type) {
	case interface{ BoolDefaultValue() defaults.Bool }:
		return kindDefault(ctx, a.BoolDefaultValue(), defaults.Bool.DefaultBool)
	case interface{ Int64DefaultValue() defaults.Int64 }:
		return kindDefault(ctx, a.Int64DefaultValue(), defaults.Int64.DefaultInt64)
	case interface{ StringDefaultValue() defaults.String }:
		return kindDefault(ctx, a.StringDefaultValue(), defaults.String.DefaultString)
	case interface{ ListDefaultValue() defaults.List }:
		return kindDefault(ctx, a.ListDefaultValue(), defaults.List.DefaultList)
	case interface{ MapDefaultValue() defaults.Map }:
		return kindDefault(ctx, a.MapDefaultValue(), defaults.Map.DefaultMap)
	case interface{ ObjectDefaultValue() defaults.Object }:
		return kindDefault(ctx, a.ObjectDefaultValue(), defaults.Object.DefaultObject)
	}
	return nil, nil
}

// defaultResponse is the response of every kind of defaults
// (defaults.BoolResponse, ...): the same fields but for the type of the
// kind's value.
type defaultResponse[Value any] interface {
	~struct {
		Diagnostics diag.Diagnostics
		PlanValue   Value
	}
}

// kindDefault returns the default d of one kind (nil when it is nil) and
// what runs it as the framework does (method: the kind's Default method,
// defaults.Bool.DefaultBool for instance): its value, and false when it
// says an error.
func kindDefault[D, Req any, Value tfValuer, Resp defaultResponse[Value]](
	ctx context.Context, d D, method func(D, context.Context, Req, *Resp),
) (any, func() (tfValuer, bool)) {
	if any(d) == nil {
		return nil, nil
	}
	return d, func() (tfValuer, bool) {
		var (
			req  Req
			resp Resp
		)
		method(d, ctx, req, &resp)
		r := struct {
			Diagnostics diag.Diagnostics
			PlanValue   Value
		}(resp)
		return r.PlanValue, !r.Diagnostics.HasError()
	}
}

type tfValuer interface {
	ToTerraformValue(context.Context) (tftypes.Value, error)
}

// hasAnyDefault reports defaults of the kinds defaultValue does not handle.
func hasAnyDefault(a schema.Attribute) bool {
	switch a := a.(type) {
	case interface{ Float32DefaultValue() defaults.Float32 }:
		return a.Float32DefaultValue() != nil
	case interface{ Float64DefaultValue() defaults.Float64 }:
		return a.Float64DefaultValue() != nil
	case interface{ Int32DefaultValue() defaults.Int32 }:
		return a.Int32DefaultValue() != nil
	case interface{ NumberDefaultValue() defaults.Number }:
		return a.NumberDefaultValue() != nil
	case interface{ SetDefaultValue() defaults.Set }:
		return a.SetDefaultValue() != nil
	case interface{ DynamicDefaultValue() defaults.Dynamic }:
		return a.DynamicDefaultValue() != nil
	}
	return false
}

// defaultsKept reports whether the framework's defaults pass
// (fwschemadata.TransformDefaults: every attribute whose configuration is
// null, its parents' being null included, gets its default; children
// first, then their parent) leaves prior as it is. Values that do not have
// the shapes the schema promises count as changed.
func defaultsKept(nodes []*node, prior, config tftypes.Value) bool {
	var pa, ca map[string]tftypes.Value
	if err := prior.As(&pa); err != nil {
		return false
	}
	if !config.IsNull() {
		if err := config.As(&ca); err != nil {
			return false
		}
	}
	for _, n := range nodes {
		pv, ok := pa[n.name]
		if !ok {
			return false
		}
		cv, ok := ca[n.name]
		if !ok {
			cv = tftypes.NewValue(pv.Type(), nil)
		}
		if !nodeKept(n, pv, cv) {
			return false
		}
	}
	return true
}

func nodeKept(n *node, pv, cv tftypes.Value) bool {
	if n.def != nil && cv.IsNull() {
		// Replaced by the default whatever happened below.
		return pv.Equal(*n.def)
	}
	if len(n.children) == 0 || pv.IsNull() || !pv.IsKnown() {
		return true
	}
	switch n.nesting {
	case nestSingle:
		return defaultsKept(n.children, pv, cv)
	case nestList:
		var pl, cl []tftypes.Value
		if pv.As(&pl) != nil {
			return false
		}
		if !cv.IsNull() && cv.As(&cl) != nil {
			return false
		}
		for i, pe := range pl {
			ce := tftypes.NewValue(pe.Type(), nil)
			if i < len(cl) {
				ce = cl[i]
			}
			if !defaultsKept(n.children, pe, ce) {
				return false
			}
		}
		return true
	case nestMap:
		var pm, cm map[string]tftypes.Value
		if pv.As(&pm) != nil {
			return false
		}
		if !cv.IsNull() && cv.As(&cm) != nil {
			return false
		}
		for k, pe := range pm {
			ce, ok := cm[k]
			if !ok {
				ce = tftypes.NewValue(pe.Type(), nil)
			}
			if !defaultsKept(n.children, pe, ce) {
				return false
			}
		}
		return true
	}
	return false
}

// semanticEquality reports whether values of t, or of any type in it,
// have semantic equality (basetypes' *ValuableWithSemanticEquals, which the
// framework's SchemaSemanticEquality calls after a Read).
func semanticEquality(ctx context.Context, t attr.Type) bool {
	if t == nil {
		return true // unknown: assume the worst
	}
	switch t.ValueType(ctx).(type) {
	case basetypes.BoolValuableWithSemanticEquals, basetypes.Float32ValuableWithSemanticEquals,
		basetypes.Float64ValuableWithSemanticEquals, basetypes.Int32ValuableWithSemanticEquals,
		basetypes.Int64ValuableWithSemanticEquals, basetypes.ListValuableWithSemanticEquals,
		basetypes.MapValuableWithSemanticEquals, basetypes.NumberValuableWithSemanticEquals,
		basetypes.ObjectValuableWithSemanticEquals, basetypes.SetValuableWithSemanticEquals,
		basetypes.StringValuableWithSemanticEquals, basetypes.DynamicValuableWithSemanticEquals:
		return true
	}
	switch t := t.(type) {
	case attr.TypeWithElementType:
		return semanticEquality(ctx, t.ElementType())
	case attr.TypeWithAttributeTypes:
		for _, at := range t.AttributeTypes() {
			if semanticEquality(ctx, at) {
				return true
			}
		}
	case attr.TypeWithElementTypes:
		for _, et := range t.ElementTypes() {
			if semanticEquality(ctx, et) {
				return true
			}
		}
	}
	return false
}
