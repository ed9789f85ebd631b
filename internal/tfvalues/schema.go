package tfvalues

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// typed is what every schema attribute is (resource, data source and
// provider schemas alike): it knows its value type.
type typed interface {
	GetType() attr.Type
}

// ObjectType is the object type of a set of schema attributes, as the
// framework derives it: the type models of those attributes must convert
// to and from. Compute it once (in a package variable) from the same
// attribute map the schema uses, so the two cannot disagree.
func ObjectType[A typed](attributes map[string]A) types.ObjectType {
	t := types.ObjectType{AttrTypes: make(map[string]attr.Type, len(attributes))}
	for name, a := range attributes {
		t.AttrTypes[name] = a.GetType()
	}
	return t
}

// ElementType is the object type of the elements of a nested attribute
// (list, set or map nested), or the type of a single nested attribute. It
// panics on any other attribute: that is a mistake in the provider's code,
// found by the first test that builds the schema.
func ElementType(a typed) types.ObjectType {
	var t attr.Type = a.GetType()
	switch c := t.(type) {
	case types.ListType:
		t = c.ElemType
	case types.SetType:
		t = c.ElemType
	case types.MapType:
		t = c.ElemType
	}
	if o, ok := t.(types.ObjectType); ok {
		return o
	}
	if o, ok := t.(interface{ ObjectType() types.ObjectType }); ok {
		return o.ObjectType()
	}
	panic(fmt.Sprintf("tfvalues.ElementType: %T is not a nested attribute (its type is %s)", a, a.GetType()))
}
