package tfvalues

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ValueFromTerraform is typ.ValueFromTerraform(ctx, in) with the same
// result, without rebuilding the Terraform type of every nested object and
// collection it visits.
//
// The framework's ObjectType, ListType, SetType and MapType check, at every
// level, that the value has their Terraform type, and compute that type
// anew each time (ObjectType.TerraformType allocates the whole subtree:
// basetypes/object_type.go:75 and list_type.go:83 in
// terraform-plugin-framework v1.19.0), so converting a pod template costs
// its depth times its size. A profile of the validation of a sandbox
// template showed a third of its CPU there. Here the type is checked once,
// at the top (the whole tree, as the framework's first check does), and
// every level below builds its value with the same constructors as the
// framework (NewObjectValueMust, NewListValueMust, ...). Any type other than
// those four (primitives, custom types such as WholeNumberType or
// timeouts) converts with its own ValueFromTerraform. The check at the top
// compares the two type trees side by side (TypeIs) instead of building
// typ's Terraform type: for a template's configuration that allocation was
// 15 % of a no-change plan's allocations.
func ValueFromTerraform(ctx context.Context, typ attr.Type, in tftypes.Value) (attr.Value, error) {
	if in.Type() != nil && !TypeIs(ctx, typ, in.Type()) {
		// The framework's error, in its words.
		return typ.ValueFromTerraform(ctx, in)
	}
	return fromTerraform(ctx, typ, in)
}

// TypeIs reports whether tt equals typ.TerraformType(ctx)
// (tftypes.Type.Equal), without building that type: the framework's
// object, list, set and map types and its primitives are compared level by
// level, any other type (a custom type) through its own TerraformType.
func TypeIs(ctx context.Context, typ attr.Type, tt tftypes.Type) bool {
	if tt == nil {
		return false
	}
	switch t := typ.(type) {
	case basetypes.ObjectType:
		o, ok := tt.(tftypes.Object)
		if !ok || o.AttributeTypes == nil || len(o.OptionalAttributes) > 0 || len(o.AttributeTypes) != len(t.AttrTypes) {
			return false
		}
		for k, at := range t.AttrTypes {
			if at == nil {
				return tt.Equal(typ.TerraformType(ctx)) // the framework's way (it panics)
			}
			if !TypeIs(ctx, at, o.AttributeTypes[k]) {
				return false
			}
		}
		return true
	case basetypes.ListType:
		if l, ok := tt.(tftypes.List); ok && t.ElemType != nil {
			return TypeIs(ctx, t.ElemType, l.ElementType)
		}
	case basetypes.SetType:
		if l, ok := tt.(tftypes.Set); ok && t.ElemType != nil {
			return TypeIs(ctx, t.ElemType, l.ElementType)
		}
	case basetypes.MapType:
		if l, ok := tt.(tftypes.Map); ok && t.ElemType != nil {
			return TypeIs(ctx, t.ElemType, l.ElementType)
		}
	case basetypes.StringType:
		return tt.Equal(tftypes.String)
	case basetypes.BoolType:
		return tt.Equal(tftypes.Bool)
	case basetypes.Int64Type, basetypes.Int32Type, basetypes.Float64Type, basetypes.Float32Type, basetypes.NumberType:
		return tt.Equal(tftypes.Number)
	}
	return tt.Equal(typ.TerraformType(ctx))
}

func fromTerraform(ctx context.Context, typ attr.Type, in tftypes.Value) (attr.Value, error) {
	switch t := typ.(type) {
	case basetypes.ObjectType:
		switch {
		case in.Type() == nil, in.IsKnown() && in.IsNull():
			return basetypes.NewObjectNull(t.AttrTypes), nil
		case !in.IsKnown():
			return basetypes.NewObjectUnknown(t.AttrTypes), nil
		}
		var raw map[string]tftypes.Value
		if err := in.As(&raw); err != nil {
			return nil, err
		}
		attrs := make(map[string]attr.Value, len(raw))
		for k, v := range raw {
			at, ok := t.AttrTypes[k]
			if !ok {
				return nil, fmt.Errorf("no attribute %q in %s", k, t)
			}
			a, err := fromTerraform(ctx, at, v)
			if err != nil {
				return nil, err
			}
			attrs[k] = a
		}
		return basetypes.NewObjectValueMust(t.AttrTypes, attrs), nil
	case basetypes.ListType:
		return collection(ctx, t.ElementType(), in, basetypes.NewListNull, basetypes.NewListUnknown, basetypes.NewListValueMust)
	case basetypes.SetType:
		return collection(ctx, t.ElementType(), in, basetypes.NewSetNull, basetypes.NewSetUnknown, basetypes.NewSetValueMust)
	case basetypes.MapType:
		et := t.ElementType()
		switch {
		case in.Type() == nil, in.IsKnown() && in.IsNull():
			return basetypes.NewMapNull(et), nil
		case !in.IsKnown():
			return basetypes.NewMapUnknown(et), nil
		}
		var raw map[string]tftypes.Value
		if err := in.As(&raw); err != nil {
			return nil, err
		}
		elems := make(map[string]attr.Value, len(raw))
		for k, v := range raw {
			e, err := fromTerraform(ctx, et, v)
			if err != nil {
				return nil, err
			}
			elems[k] = e
		}
		return basetypes.NewMapValueMust(et, elems), nil
	}
	return typ.ValueFromTerraform(ctx, in)
}

// elements converts the elements of a list or set value.
// collection is a list or set of elements of type et read from in, made by
// the kind's constructors of a null, an unknown and a known value.
func collection[V attr.Value](ctx context.Context, et attr.Type, in tftypes.Value,
	null, unknown func(attr.Type) V, known func(attr.Type, []attr.Value) V,
) (attr.Value, error) {
	elems, isNull, isUnknown, err := elements(ctx, et, in)
	switch {
	case err != nil:
		return nil, err
	case isNull:
		return null(et), nil
	case isUnknown:
		return unknown(et), nil
	}
	return known(et, elems), nil
}

func elements(ctx context.Context, elemType attr.Type, in tftypes.Value) (elems []attr.Value, null, unknown bool, err error) {
	switch {
	case in.Type() == nil, in.IsKnown() && in.IsNull():
		return nil, true, false, nil
	case !in.IsKnown():
		return nil, false, true, nil
	}
	var raw []tftypes.Value
	if err := in.As(&raw); err != nil {
		return nil, false, false, err
	}
	elems = make([]attr.Value, 0, len(raw))
	for _, v := range raw {
		e, err := fromTerraform(ctx, elemType, v)
		if err != nil {
			return nil, false, false, err
		}
		elems = append(elems, e)
	}
	return elems, false, false, nil
}
