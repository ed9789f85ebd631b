package fastpath

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// The validation index of a schema: what the framework's schema walk
// (terraform-plugin-framework v1.19.0, internal/fwserver/schema_validation.go,
// attribute_validation.go, block_validation.go) can say about each
// attribute and block, derived once. Only the nodes below which something
// can produce a diagnostic are in it (see vnode.relevant): an optional
// attribute without validators and deprecation, whose value converts
// without error and validates nothing itself, never says anything, and
// neither does anything inside it.

// vnode is an attribute or a single nested block of the validation index.
type vnode struct {
	name  string
	block bool
	typ   attr.Type // the attribute's or block's type (GetType, Type)

	// Attributes only: the framework's own checks.
	required, optional, computed bool

	deprecation string

	// validate runs the attribute's (or block's) own validators on its
	// converted value; nil when it has none.
	validate validateFunc
	// objValidate runs the validators of a nested attribute's object (each
	// element of a list or map nested attribute) or of a single nested
	// attribute's or block's object (the same validators as validate: the
	// framework runs them twice, once per walk); nil when none.
	objValidate objectValidateFunc
	// elemType is the object type of a list or map nested attribute's
	// elements.
	elemType attr.Type

	nesting  int      // nestNone, nestSingle, nestList, nestMap
	children []*vnode // nested attributes, then nested blocks (relevant ones only)
}

// vreq is what every validator request of one attribute carries.
type vreq struct {
	caps   validator.ValidateSchemaClientCapabilities
	config tfsdk.Config
	path   path.Path
	expr   path.Expression
}

// validateFunc converts v as the framework's AttributeValidate<Kind> does
// and calls each validator; it panics with bail where the framework
// would have said something the fast path does not mirror.
type validateFunc func(ctx context.Context, v attr.Value, r vreq, out *diag.Diagnostics)

type objectValidateFunc func(ctx context.Context, v basetypes.ObjectValue, r vreq, out *diag.Diagnostics)

// validateIndex returns the validation index of a schema, or why the fast
// path does not validate configurations of it.
func validateIndex(ctx context.Context, s schema.Schema) ([]*vnode, string) {
	if d := s.ValidateImplementation(ctx); len(d) > 0 {
		return nil, "schema implementation: " + d[0].Summary() + ": " + d[0].Detail()
	}
	return walkSchema(&validateWalker{schemaWalk{ctx: ctx}}, s)
}

type validateWalker struct{ schemaWalk }

func (w *validateWalker) attribute(name, p string, a schema.Attribute) *vnode {
	if !a.IsRequired() && !a.IsOptional() && !a.IsComputed() {
		// "Invalid Attribute Definition", on every request.
		w.refuse(p, "attribute neither required, optional nor computed")
		return nil
	}
	if a.IsWriteOnly() {
		w.refuse(p, "write-only attribute")
		return nil
	}
	n := &vnode{
		name: name, typ: a.GetType(),
		required: a.IsRequired(), optional: a.IsOptional(), computed: a.IsComputed(),
		deprecation: a.GetDeprecationMessage(),
	}
	if !validatedType(n.typ) {
		w.refuse(p, "type %T", n.typ)
		return nil
	}
	var ok bool
	if n.validate, ok = attributeValidators(a); !ok {
		w.refuse(p, "attribute kind %T", a)
		return nil
	}
	if nd, ok := nestedOf(a); ok {
		switch nd.nesting {
		case nestList, nestMap:
			if n.elemType, ok = elemType(n.typ, nd.nesting); !ok {
				w.refuse(p, "%s nested attribute of type %T", map[int]string{nestList: "list", nestMap: "map"}[nd.nesting], n.typ)
				return nil
			}
		case nestSet:
			// Elements are found by value (path.AtSetValue); not mirrored.
			w.refuse(p, "set nested attribute")
			return nil
		}
		n.nesting = nd.nesting
		n.objValidate = nestedObjectValidators(nd.object)
		n.children = walkObject(w, nd.attrs, nil, p+".")
	}
	if !n.relevant() {
		return nil
	}
	return n
}

func (w *validateWalker) block(name, p string, b schema.Block) *vnode {
	sb, ok := b.(schema.SingleNestedBlock)
	if !ok {
		// List and set blocks: the framework nullifies empty ones
		// (fromproto6 NullifyCollectionBlocks) and finds set elements by
		// value; not mirrored. (No resource of this provider has one.)
		w.refuse(p, "block kind %T", b)
		return nil
	}
	n := &vnode{name: name, block: true, typ: sb.Type(), deprecation: sb.GetDeprecationMessage(), nesting: nestSingle}
	if !validatedType(n.typ) {
		w.refuse(p, "type %T", n.typ)
		return nil
	}
	n.objValidate = nestedObjectValidators(sb.GetNestedObject())
	n.validate = objectKindValidators(sb.ObjectValidators())
	n.children = walkObject(w, sb.Attributes, sb.Blocks, p+".")
	if !n.relevant() {
		return nil
	}
	return n
}

// relevant reports whether anything at or below n can produce a
// diagnostic: the framework's checks of required and read-only
// attributes, validators, deprecation messages.
func (n *vnode) relevant() bool {
	return n.required || (n.computed && !n.optional) || n.deprecation != "" ||
		n.validate != nil || n.objValidate != nil || len(n.children) > 0
}

// elemType is the element type of t when t is the framework's list type
// (nesting nestList) or map type (nestMap); false for any other.
func elemType(t attr.Type, nesting int) (attr.Type, bool) {
	switch t := t.(type) {
	case basetypes.ListType:
		return t.ElemType, nesting == nestList
	case basetypes.MapType:
		return t.ElemType, nesting == nestMap
	}
	return nil, false
}

// validatedType reports whether the values of t convert and validate
// themselves as the fast path assumes: the framework's own types (whose
// values are never xattr.ValidateableAttribute and whose TypeWithValidate
// says nothing about a value that converted, see numbersOK), the timeouts
// block and tfvalues.WholeNumberType (the framework's Int64 but for
// fractions, which numbersOK leaves to the framework). Float32 and Int32
// are left out: numbersOK does not bound them.
func validatedType(t attr.Type) bool {
	return everyType(t, func(t attr.Type) bool {
		switch t.(type) {
		case tfvalues.WholeNumberType, basetypes.StringType, basetypes.BoolType, basetypes.Int64Type,
			basetypes.Float64Type, basetypes.NumberType:
			return true
		}
		return false
	})
}

// bail is panicked by a validator runner where the framework's answer
// holds something the fast path does not mirror (a conversion error, a
// value that validates itself): the request goes to the framework.
type bail struct{ why string }

// convert reads v as the framework's AttributeValidate<Kind> does: as the
// kind's Valuable interface, converted by its To<Kind>Value. Where the
// framework would say something (v not of the kind, conversion
// diagnostics), it bails.
func convert[Valuable, Value any](ctx context.Context, v attr.Value, kind string, to func(Valuable, context.Context) (Value, diag.Diagnostics)) Value {
	vv, ok := v.(Valuable)
	if !ok {
		panic(bail{kind + ": value of another kind"})
	}
	cv, d := to(vv, ctx)
	if len(d) > 0 {
		panic(bail{kind + ": conversion diagnostics"})
	}
	return cv
}

func toObject(ctx context.Context, v attr.Value) basetypes.ObjectValue {
	return convert(ctx, v, "object", basetypes.ObjectValuable.ToObjectValue)
}

// nestedObjectValidators runs the validators of a nested attribute's or
// block's object, as NestedAttributeObjectValidate and
// NestedBlockObjectValidate do.
func nestedObjectValidators(o any) objectValidateFunc {
	if ov, ok := o.(interface{ ObjectValidators() []validator.Object }); ok {
		return objectValidators(ov.ObjectValidators())
	}
	return nil
}

func objectValidators(vs []validator.Object) objectValidateFunc {
	if len(vs) == 0 {
		return nil
	}
	return func(ctx context.Context, v basetypes.ObjectValue, r vreq, out *diag.Diagnostics) {
		runValidators(ctx, vs, validator.Object.ValidateObject, v, r, out)
	}
}

// validatorRequest is the request of every kind of the framework's
// validators (validator.BoolRequest, validator.StringRequest, ...): the
// same fields but for the type of ConfigValue, the kind's value.
type validatorRequest[Value any] interface {
	~struct {
		Path               path.Path
		PathExpression     path.Expression
		Config             tfsdk.Config
		ConfigValue        Value
		ClientCapabilities validator.ValidateSchemaClientCapabilities
	}
}

// validatorResponse is the response of every kind of validators
// (validator.BoolResponse, ...).
type validatorResponse interface {
	~struct{ Diagnostics diag.Diagnostics }
}

// runValidators calls each validator of vs (validate is the kind's
// method, validator.Bool.ValidateBool for instance) on v with the kind's
// request, in order, and appends its diagnostics.
func runValidators[V, Value any, Req validatorRequest[Value], Resp validatorResponse](
	ctx context.Context, vs []V, validate func(V, context.Context, Req, *Resp), v Value, r vreq, out *diag.Diagnostics,
) {
	req := Req{ClientCapabilities: r.caps, Config: r.config, ConfigValue: v, Path: r.path, PathExpression: r.expr}
	for _, x := range vs {
		var resp Resp
		validate(x, ctx, req, &resp)
		out.Append(struct{ Diagnostics diag.Diagnostics }(resp).Diagnostics...)
	}
}

// kindValidators is the runner of one kind's validators vs: the value
// converted once as the framework converts it (convert), then the
// validators run (runValidators). Nil when there are none.
func kindValidators[V, Valuable, Value any, Req validatorRequest[Value], Resp validatorResponse](
	vs []V, kind string,
	to func(Valuable, context.Context) (Value, diag.Diagnostics),
	validate func(V, context.Context, Req, *Resp),
) (validateFunc, bool) {
	if len(vs) == 0 {
		return nil, true
	}
	return func(ctx context.Context, v attr.Value, r vreq, out *diag.Diagnostics) {
		runValidators(ctx, vs, validate, convert(ctx, v, kind, to), r, out)
	}, true
}

// objectKindValidators is the runner of an attribute's or a block's own
// object validators (nil when none).
func objectKindValidators(vs []validator.Object) validateFunc {
	f, _ := kindValidators(vs, "object", basetypes.ObjectValuable.ToObjectValue, validator.Object.ValidateObject)
	return f
}

// attributeValidators returns the runner of an attribute's validators
// (nil when it has none), as AttributeValidate's switch on the kind of
// validators; false for a kind the fast path does not run (Float32,
// Int32, Dynamic).
func attributeValidators(a schema.Attribute) (validateFunc, bool) {
	switch a := a.(type) {
	case interface{ BoolValidators() []validator.Bool }:
		return kindValidators(a.BoolValidators(), "bool", basetypes.BoolValuable.ToBoolValue, validator.Bool.ValidateBool)
	case interface {
		Float32Validators() []validator.Float32
	}:
		return nil, false
	case interface {
		Float64Validators() []validator.Float64
	}:
		return kindValidators(a.Float64Validators(), "float64", basetypes.Float64Valuable.ToFloat64Value, validator.Float64.ValidateFloat64)
	case interface{ Int32Validators() []validator.Int32 }:
		return nil, false
	case interface{ Int64Validators() []validator.Int64 }:
		return kindValidators(a.Int64Validators(), "int64", basetypes.Int64Valuable.ToInt64Value, validator.Int64.ValidateInt64)
	case interface{ ListValidators() []validator.List }:
		return kindValidators(a.ListValidators(), "list", basetypes.ListValuable.ToListValue, validator.List.ValidateList)
	case interface{ MapValidators() []validator.Map }:
		return kindValidators(a.MapValidators(), "map", basetypes.MapValuable.ToMapValue, validator.Map.ValidateMap)
	case interface{ NumberValidators() []validator.Number }:
		return kindValidators(a.NumberValidators(), "number", basetypes.NumberValuable.ToNumberValue, validator.Number.ValidateNumber)
	case interface{ ObjectValidators() []validator.Object }:
		return objectKindValidators(a.ObjectValidators()), true
	case interface{ SetValidators() []validator.Set }:
		return kindValidators(a.SetValidators(), "set", basetypes.SetValuable.ToSetValue, validator.Set.ValidateSet)
	case interface{ StringValidators() []validator.String }:
		return kindValidators(a.StringValidators(), "string", basetypes.StringValuable.ToStringValue, validator.String.ValidateString)
	case interface {
		DynamicValidators() []validator.Dynamic
	}:
		return nil, false
	}
	// No validators of any kind (the framework's switch matches nothing).
	return nil, true
}
