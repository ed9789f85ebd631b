package fastpath

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// InertOnCreate is implemented by a provider's own plan modifiers that
// change nothing and say nothing when there is no prior state (the plan of
// a create). A resource type whose schema holds any other plan modifier
// than these and the framework's own UseStateForUnknown and
// RequiresReplace/RequiresReplaceIf (which return at once when the prior
// state is null: terraform-plugin-framework v1.19.0,
// resource/schema/stringplanmodifier/use_state_for_unknown.go:44 and
// requires_replace_if.go:53, alike for every kind) is never planned on
// create by the fast path.
type InertOnCreate interface {
	InertOnCreate()
}

// cnode is an attribute or block of a schema in the create index: only
// those at or below which a create's plan can differ from the proposed
// state (a default or a computed attribute) are in it.
type cnode struct {
	name  string
	block bool // blocks get neither defaults nor unknowns themselves
	// computed attributes without a default are planned unknown when
	// their configuration is null.
	computed bool
	// whole: of tfvalues.WholeNumberType.
	whole    bool
	def      *tftypes.Value // the constant default, if any
	nesting  int
	children []*cnode // of the nested object, when the node has one
}

// createIndex returns the create index of a schema, or why the fast path
// cannot plan creates of it (modifiers are checked by the walker of
// schema.go against InertOnCreate, see createModifiers).
func createIndex(ctx context.Context, s schema.Schema) ([]*cnode, string) {
	return walkSchema(&createWalker{schemaWalk{ctx: ctx}}, s)
}

type createWalker struct{ schemaWalk }

func (w *createWalker) attribute(name, p string, a schema.Attribute) *cnode {
	if w.unplanned(p, a) {
		return nil
	}
	// The framework reads the configuration of every attribute it visits
	// as a value of the attribute's type, and a custom value type may
	// validate itself there (fwschemadata/data_value.go:90-128): only the
	// framework's own types are mirrored.
	// tfvalues.WholeNumberType is the framework's Int64 type except for a
	// number with a fraction, whose value fails validation: the fast path
	// leaves such configurations to the framework (see cnode.plan).
	_, whole := a.GetType().(tfvalues.WholeNumberType)
	if !whole && !plainType(a.GetType()) {
		w.refuse(p, "custom type %T", a.GetType())
		return nil
	}
	w.modifiers(p, planModifiers(a), markedOnCreate)
	n := &cnode{name: name, computed: a.IsComputed(), whole: whole}
	// Defaults: the constant defaults of the unchanged fast path.
	before := w.why
	d, ok := w.defaultValue(p, a)
	if w.why != before {
		return nil // refused
	}
	if ok {
		if !d.Type().Equal(a.GetType().TerraformType(w.ctx)) {
			w.refuse(p, "default of type %s", d.Type())
			return nil
		}
		n.def = &d
	}
	if nd, ok := nestedOf(a); ok {
		w.modifiers(p, nd.modifiers, markedOnCreate)
		n.nesting, n.children = nd.nesting, walkObject(w, nd.attrs, nil, p+".")
		// The framework finds a set element's configuration by the
		// planned element's value (MarkComputedNilsAsUnknown walks the
		// configuration with tftypes.WalkAttributePath); not mirrored.
		if n.nesting == nestSet && len(n.children) > 0 {
			w.refuse(p, "computed attribute or default inside a set")
		}
	}
	if n.def == nil && !n.computed && !n.whole && len(n.children) == 0 {
		return nil
	}
	return n
}

func (w *createWalker) block(name, p string, b schema.Block) *cnode {
	n := &cnode{name: name, block: true}
	if !plainType(b.Type()) {
		w.refuse(p, "custom type %T", b.Type())
		return nil
	}
	switch b := b.(type) {
	case schema.SingleNestedBlock:
		w.modifiers(p, b.PlanModifiers, markedOnCreate)
		n.nesting, n.children = nestSingle, walkObject(w, b.Attributes, b.Blocks, p+".")
	case schema.ListNestedBlock, schema.SetNestedBlock:
		// The framework hands ModifyPlan an empty list or set block as a
		// null one (fromproto6/dynamic_value.go:52,
		// fwschemadata/data_nullify_collection_blocks.go) and encodes a
		// null one as empty (toproto6/dynamic_value.go:30); not mirrored.
		// (No resource of this provider has one.)
		w.refuse(p, "list or set block")
		return nil
	default:
		w.refuse(p, "block kind %T", b)
		return nil
	}
	if len(n.children) == 0 {
		return nil
	}
	return n
}

// markedOnCreate reports a plan modifier the provider marked
// InertOnCreate: with the framework's that return at once without prior
// state (inertModifiers), the only ones a create's plan allows.
func markedOnCreate(m any) bool { _, ok := m.(InertOnCreate); return ok }

// plainType reports whether t and every type in it are the framework's own
// (basetypes), whose values neither validate themselves nor convert
// differently.
func plainType(t attr.Type) bool {
	return everyType(t, func(t attr.Type) bool {
		switch t.(type) {
		case basetypes.StringType, basetypes.BoolType, basetypes.Int64Type, basetypes.Int32Type,
			basetypes.Float64Type, basetypes.Float32Type, basetypes.NumberType:
			return true
		}
		return false
	})
}

// everyType reports whether t is made of the framework's own lists, sets,
// maps and objects (basetypes) and the timeouts object (its values are the
// framework's objects wrapped, with no validation of their own:
// terraform-plugin-framework-timeouts v0.7.0,
// resource/timeouts/timeouts.go:24-60) around element types leaf accepts.
func everyType(t attr.Type, leaf func(attr.Type) bool) bool {
	switch t := t.(type) {
	case timeouts.Type:
		return everyType(t.ObjectType, leaf)
	case basetypes.ListType, basetypes.SetType, basetypes.MapType:
		et, ok := t.(attr.TypeWithElementType)
		return ok && everyType(et.ElementType(), leaf)
	case basetypes.ObjectType:
		for _, at := range t.AttrTypes {
			if !everyType(at, leaf) {
				return false
			}
		}
		return true
	}
	return leaf(t)
}
