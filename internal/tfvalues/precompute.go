// Precomputed schema types: the framework's type lookups on large nested
// schemas made cheap.
//
// terraform-plugin-framework (v1.19) derives the type of a nested attribute
// on every call of GetType: SingleNestedAttribute.GetType and
// NestedAttributeObject.Type build a fresh types.ObjectType from the types
// of all attributes below, recursively, unless the attribute carries a
// CustomType. The framework calls them for every value it visits while
// converting or transforming a plan, state or configuration
// (SchemaTypeAtTerraformPath inside tftypes.Transform: NullifyCollectionBlocks,
// TransformDefaults, ReifyNullCollectionBlocks, fromproto6.DynamicValue), so
// the cost grows with the number of values times the size of the subtree
// below them. For the pod template (hundreds of attributes, five levels
// deep) a profile of a no-change plan showed about 45 % of the provider's
// CPU in SchemaTypeAtTerraformPath -> NestedAttributeObjectType and the maps
// it allocates (bench: BenchmarkPlanNoChange).
//
// PrecomputeTypes sets CustomType on every nested attribute and nested object to
// exactly the type the framework would have derived (types.ObjectType,
// types.ListType, types.SetType, types.MapType of the same attribute
// types), computed once when the schema is built. Values, validation,
// defaults and plan modifiers are unchanged: only the repeated derivation
// goes away. A CustomType already set by the schema is kept. The types are
// those ObjectType and ElementType derive, so a model checked against them
// (CheckModel) fits the precomputed schema too.
package tfvalues

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// PrecomputeTypes returns s with the types of its nested attributes and blocks
// precomputed, and its top-level Int64 attributes of WholeNumberType (a
// fraction gets a real message). The attribute maps of s are not modified (schemas often
// share attribute maps between resources); the result holds new ones.
func PrecomputeTypes(s schema.Schema) schema.Schema {
	s.Attributes = attributes(s.Attributes)
	wholeNumbers(s.Attributes)
	s.Blocks = blocks(s.Blocks)
	return s
}

func attributes(in map[string]schema.Attribute) map[string]schema.Attribute {
	return mapped(in, attribute)
}

func blocks(in map[string]schema.Block) map[string]schema.Block { return mapped(in, block) }

// mapped is a new map of f of each value of in (nil for nil).
func mapped[V any](in map[string]V, f func(V) V) map[string]V {
	if in == nil {
		return nil
	}
	out := make(map[string]V, len(in))
	for name, v := range in {
		out[name] = f(v)
	}
	return out
}

// typeOr is the schema's own custom type when it set one, else the
// derived type.
func typeOr[T any](custom, derived T) T {
	if any(custom) != nil {
		return custom
	}
	return derived
}

func attribute(a schema.Attribute) schema.Attribute {
	switch a := a.(type) {
	case schema.SingleNestedAttribute:
		a.Attributes = attributes(a.Attributes)
		a.CustomType = typeOr[basetypes.ObjectTypable](a.CustomType, ObjectType(a.Attributes))
		return a
	case schema.ListNestedAttribute:
		return nestedCollection(&a, &a.NestedObject, &a.CustomType, object, listType)
	case schema.SetNestedAttribute:
		return nestedCollection(&a, &a.NestedObject, &a.CustomType, object, setType)
	case schema.MapNestedAttribute:
		return nestedCollection(&a, &a.NestedObject, &a.CustomType, object, mapType)
	}
	return a
}

func object(o schema.NestedAttributeObject) schema.NestedAttributeObject {
	o.Attributes = attributes(o.Attributes)
	o.CustomType = typeOr[basetypes.ObjectTypable](o.CustomType, ObjectType(o.Attributes))
	return o
}

func block(b schema.Block) schema.Block {
	switch b := b.(type) {
	case schema.SingleNestedBlock:
		b.Attributes = attributes(b.Attributes)
		b.Blocks = blocks(b.Blocks)
		b.CustomType = typeOr[basetypes.ObjectTypable](b.CustomType, types.ObjectType{AttrTypes: blockAttrTypes(b.Attributes, b.Blocks)})
		return b
	case schema.ListNestedBlock:
		return nestedCollection(&b, &b.NestedObject, &b.CustomType, blockObject, listType)
	case schema.SetNestedBlock:
		return nestedCollection(&b, &b.NestedObject, &b.CustomType, blockObject, setType)
	}
	return b
}

// nestedCollection precomputes the list, set or map nested attribute or block
// *s: its nested object *o (precompute: object or blockObject), then its
// type *custom, the collection (of) of the object's type, unless the
// schema set one.
func nestedCollection[S any, O nestedObject, T any](
	s *S, o *O, custom *T, precompute func(O) O, of func(elem attr.Type) T,
) S {
	*o = precompute(*o)
	*custom = typeOr(*custom, of((*o).Type()))
	return *s
}

// nestedObject is a nested attribute's or block's object
// (schema.NestedAttributeObject, schema.NestedBlockObject).
type nestedObject interface {
	Type() basetypes.ObjectTypable
}

func listType(elem attr.Type) basetypes.ListTypable { return types.ListType{ElemType: elem} }

func setType(elem attr.Type) basetypes.SetTypable { return types.SetType{ElemType: elem} }

func mapType(elem attr.Type) basetypes.MapTypable { return types.MapType{ElemType: elem} }

func blockObject(o schema.NestedBlockObject) schema.NestedBlockObject {
	o.Attributes = attributes(o.Attributes)
	o.Blocks = blocks(o.Blocks)
	o.CustomType = typeOr[basetypes.ObjectTypable](o.CustomType, types.ObjectType{AttrTypes: blockAttrTypes(o.Attributes, o.Blocks)})
	return o
}

func blockAttrTypes(attrs map[string]schema.Attribute, bs map[string]schema.Block) map[string]attr.Type {
	out := ObjectType(attrs).AttrTypes
	for name, b := range bs {
		out[name] = b.Type()
	}
	return out
}
