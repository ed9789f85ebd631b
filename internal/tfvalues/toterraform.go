package tfvalues

import (
	"context"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Framework values to Terraform's, and one top-level attribute of a plan,
// state or configuration to a framework value, without rebuilding the
// type tree at every level.
//
// The framework's ToTerraformValue of an object, list, set or map
// (types/basetypes/object_value.go:264 and list_value.go:224 in
// terraform-plugin-framework v1.19.0) first builds its own Terraform type
// from its attribute or element types (TerraformType: a fresh tree of the
// whole subtree) and then converts every value below, which does the same
// for its own subtree: for a value as deep as a pod template the cost grows
// with its size times its depth. In `make bench` profiles of an apply of
// 600 objects, ObjectType.TerraformType was 31 % of everything the
// provider allocated, most of it under a state written with SetState (the
// create's, the update's and the read's) and under GetAttribute of the pod
// template in the template's ModifyPlan, whose framework path converts the
// attribute three times (fwschemadata/data_get_at_path.go:21-60: to a
// framework value, back to Terraform's, and again into the target).

// ToTerraform returns v.ToTerraformValue(ctx): the same value and type, or
// the same error, with the Terraform type of v built once instead of once
// per level.
func ToTerraform(ctx context.Context, v attr.Value) (tftypes.Value, error) {
	if v == nil {
		return tftypes.Value{}, nil
	}
	return toTerraform(ctx, v, v.Type(ctx).TerraformType(ctx))
}

// toTerraform converts v, whose Terraform type is tt. The framework's own
// collection values (not a custom type's) are taken apart here, each value
// below converted with its type taken from tt; anything else, and anything
// that does not fit tt, is the value's own ToTerraformValue, so a custom
// value and every error come out exactly as the framework makes them.
func toTerraform(ctx context.Context, v attr.Value, tt tftypes.Type) (tftypes.Value, error) {
	switch v := v.(type) {
	case basetypes.ObjectValue:
		ot, ok := tt.(tftypes.Object)
		if !ok || len(ot.OptionalAttributes) > 0 {
			break
		}
		if out, ok := nullOrUnknown(v, tt); ok {
			return out, nil
		}
		attrs := v.Attributes()
		if len(attrs) != len(ot.AttributeTypes) {
			break
		}
		vals := make(map[string]tftypes.Value, len(attrs))
		for name, a := range attrs {
			at, ok := ot.AttributeTypes[name]
			if !ok || a == nil {
				return v.ToTerraformValue(ctx)
			}
			av, err := toTerraform(ctx, a, at)
			if err != nil {
				return v.ToTerraformValue(ctx)
			}
			vals[name] = av
		}
		if out, ok := newValue(tt, vals); ok {
			return out, nil
		}
	case basetypes.ListValue:
		if lt, ok := tt.(tftypes.List); ok {
			if out, ok := elementsToTerraform(ctx, v, v.Elements(), lt.ElementType, tt); ok {
				return out, nil
			}
		}
	case basetypes.SetValue:
		if st, ok := tt.(tftypes.Set); ok {
			if out, ok := elementsToTerraform(ctx, v, v.Elements(), st.ElementType, tt); ok {
				return out, nil
			}
		}
	case basetypes.MapValue:
		mt, ok := tt.(tftypes.Map)
		if !ok || mt.ElementType == nil || mt.ElementType.Is(tftypes.DynamicPseudoType) {
			break
		}
		if out, ok := nullOrUnknown(v, tt); ok {
			return out, nil
		}
		elems := v.Elements()
		vals := make(map[string]tftypes.Value, len(elems))
		for k, e := range elems {
			if e == nil {
				return v.ToTerraformValue(ctx)
			}
			ev, err := toTerraform(ctx, e, mt.ElementType)
			if err != nil {
				return v.ToTerraformValue(ctx)
			}
			vals[k] = ev
		}
		if out, ok := newValue(tt, vals); ok {
			return out, nil
		}
	}
	return v.ToTerraformValue(ctx)
}

// elementsToTerraform converts a list's or set's elements (element type
// et); ok false sends the value the framework's way. Lists and sets of
// dynamic values are the framework's (list_value.go:229-241: their null
// and unknown elements need a concrete type).
func elementsToTerraform(ctx context.Context, v attr.Value, elems []attr.Value, et, tt tftypes.Type) (tftypes.Value, bool) {
	if et == nil || et.Is(tftypes.DynamicPseudoType) {
		return tftypes.Value{}, false
	}
	if out, ok := nullOrUnknown(v, tt); ok {
		return out, true
	}
	vals := make([]tftypes.Value, len(elems))
	for i, e := range elems {
		if e == nil {
			return tftypes.Value{}, false
		}
		ev, err := toTerraform(ctx, e, et)
		if err != nil {
			return tftypes.Value{}, false
		}
		vals[i] = ev
	}
	return newValue(tt, vals)
}

// nullOrUnknown is the null or unknown value of type tt when v is one.
func nullOrUnknown(v attr.Value, tt tftypes.Type) (tftypes.Value, bool) {
	switch {
	case v.IsNull():
		return tftypes.NewValue(tt, nil), true
	case v.IsUnknown():
		return tftypes.NewValue(tt, tftypes.UnknownValue), true
	}
	return tftypes.Value{}, false
}

// newValue is tftypes.NewValue without its panic: ok false where the
// values do not fit the type (the framework's ValidateValue then errs).
func newValue(tt tftypes.Type, vals any) (out tftypes.Value, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return tftypes.NewValue(tt, vals), true
}

// GetPlanAttribute, GetStateAttribute and GetConfigAttribute read the
// top-level attribute (or block) name into target, exactly as
// GetAttribute(ctx, path.Root(name), target) does, converting only that
// attribute's value, once. Where the framework would do more than convert
// (a null or unknown whole value, a type or value that validates itself, a
// target of another Go type than the value's, a schema that is not a
// resource schema) its own GetAttribute runs, with its diagnostics.
func GetPlanAttribute(ctx context.Context, p tfsdk.Plan, name string, target any) diag.Diagnostics {
	if getTopLevel(ctx, p.Schema, p.Raw, name, target) {
		return nil
	}
	return p.GetAttribute(ctx, path.Root(name), target)
}

func GetStateAttribute(ctx context.Context, s tfsdk.State, name string, target any) diag.Diagnostics {
	if getTopLevel(ctx, s.Schema, s.Raw, name, target) {
		return nil
	}
	return s.GetAttribute(ctx, path.Root(name), target)
}

func GetConfigAttribute(ctx context.Context, c tfsdk.Config, name string, target any) diag.Diagnostics {
	if getTopLevel(ctx, c.Schema, c.Raw, name, target) {
		return nil
	}
	return c.GetAttribute(ctx, path.Root(name), target)
}

// getTopLevel mirrors fwschemadata.Data.GetAtPath and ValueAtPath
// (data_get_at_path.go:19-60, data_value.go:23-125 in v1.19.0) for a path of
// one attribute name: the attribute's type from the schema, its value
// converted with ValueFromTerraform (the framework's conversion, shown equal
// by its tests), then set into target (a *attr.Value, or a pointer to the
// value's own Go type: reflect.Into's NewAttributeValue,
// internal/reflect/interfaces.go:384-427, converts the same value again and
// accepts only that).
func getTopLevel(ctx context.Context, s any, raw tftypes.Value, name string, target any) bool {
	rs, ok := s.(schema.Schema)
	if !ok || raw.IsNull() || !raw.IsKnown() {
		return false
	}
	var at attr.Type
	if a, ok := rs.Attributes[name]; ok {
		at = a.GetType()
	} else if b, ok := rs.Blocks[name]; ok {
		at = b.Type()
	} else {
		return false
	}
	//nolint:staticcheck // xattr.TypeWithValidate is deprecated, but the framework still runs it.
	if _, ok := at.(xattr.TypeWithValidate); ok {
		return false
	}
	var attrs map[string]tftypes.Value
	if raw.As(&attrs) != nil {
		return false
	}
	tv, ok := attrs[name]
	if !ok {
		return false
	}
	v, err := ValueFromTerraform(ctx, at, tv)
	if err != nil || v == nil {
		return false
	}
	if _, ok := v.(xattr.ValidateableAttribute); ok {
		return false
	}
	if p, ok := target.(*attr.Value); ok {
		if p == nil {
			return false
		}
		*p = v
		return true
	}
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Type() != reflect.TypeOf(v) {
		return false
	}
	rv.Elem().Set(reflect.ValueOf(v))
	return true
}
