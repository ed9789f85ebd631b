// Package tfvalues is the one place for conversions between
// terraform-plugin-framework values and Go values: strings, maps, lists,
// objects and instants, with the rules every family follows for null,
// unknown and empty, and for keeping the spelling the user wrote when the
// API answers with an equivalent one.
//
// The rules:
//   - Reading a value the configuration does not decide yet (unknown) or
//     leaves out (null) gives Go's zero value (nil map, nil slice, ""), so
//     expand functions send nothing for it.
//   - Flattening an empty answer from the API keeps what the user wrote: an
//     empty map or list stays empty when the prior value was empty, and is
//     null otherwise (Kubernetes drops empty maps and lists, so "empty" and
//     "absent" read back the same).
//   - Flattening an instant keeps the prior spelling of the same instant to
//     the second (the API server stores RFC 3339 in UTC, without fractions).
//
// It also derives attribute types from a schema (ObjectType, ElementType),
// so that models and schemas cannot disagree: the schema is the single
// source of truth for the shape of a nested attribute. PrecomputeTypes
// stores those types in a resource schema once, so the framework does not
// derive them again for every value it visits, and gives top-level integers
// WholeNumberType (a readable error for a fraction).
package tfvalues

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// StringIfSet reads a string attribute value that is known and not null;
// ok is false for null, unknown, or a value that is not a string.
func StringIfSet(v attr.Value) (s string, ok bool) {
	sv, isString := v.(types.String)
	if !isString || sv.IsNull() || sv.IsUnknown() {
		return "", false
	}
	return sv.ValueString(), true
}

// StringIfKnown reads a string attribute value that is known; null reads as
// "" (known: the attribute is absent). ok is false for unknown or a value
// that is not a string.
func StringIfKnown(v attr.Value) (s string, ok bool) {
	sv, isString := v.(types.String)
	if !isString || sv.IsUnknown() {
		return "", false
	}
	return sv.ValueString(), true
}

// StringOr is s as a known string, or def when s is "" (an API field left
// empty because the server's default applies).
func StringOr(s, def string) types.String {
	if s == "" {
		return types.StringValue(def)
	}
	return types.StringValue(s)
}

// StringMap reads a map of strings; null or unknown gives nil.
func StringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	return out
}

// StringList reads a list of strings; null or unknown gives nil.
func StringList(ctx context.Context, l types.List, diags *diag.Diagnostics) []string {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []string
	diags.Append(l.ElementsAs(ctx, &out, false)...)
	return out
}

// Strings flattens a list of strings from the API: nil is null, any other
// slice (an empty one too) a list of its elements.
func Strings(ctx context.Context, live []string, diags *diag.Diagnostics) types.List {
	if live == nil {
		return types.ListNull(types.StringType)
	}
	l, d := types.ListValueFrom(ctx, types.StringType, live)
	diags.Append(d...)
	return l
}

// Map flattens a map of strings from the API: an empty (or absent) live map
// is an empty map when prior was a known empty map (the user wrote {}) and
// null otherwise.
func Map(ctx context.Context, live map[string]string, prior types.Map, diags *diag.Diagnostics) types.Map {
	if len(live) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return types.MapValueMust(types.StringType, map[string]attr.Value{})
		}
		return types.MapNull(types.StringType)
	}
	m, d := types.MapValueFrom(ctx, types.StringType, live)
	diags.Append(d...)
	return m
}

// Time flattens an RFC 3339 instant from the API (live, "" for absent):
// prior is kept when it is the same instant to the second, whatever its
// spelling (an offset, fractions), so that the user's spelling survives;
// otherwise live as the API wrote it.
func Time(live string, prior types.String) types.String {
	if live == "" {
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		a, errA := time.Parse(time.RFC3339, live)
		b, errB := time.Parse(time.RFC3339, prior.ValueString())
		if errA == nil && errB == nil && a.Truncate(time.Second).Equal(b.Truncate(time.Second)) {
			return prior
		}
	}
	return types.StringValue(live)
}

// Object builds an object of type t from a model struct with tfsdk tags.
func Object(ctx context.Context, t types.ObjectType, model any, diags *diag.Diagnostics) types.Object {
	o, d := ObjectFrom(ctx, t, model)
	diags.Append(d...)
	return o
}

// ObjectOf builds an object of type t from its attribute values.
func ObjectOf(t types.ObjectType, values map[string]attr.Value, diags *diag.Diagnostics) types.Object {
	o, d := types.ObjectValue(t.AttrTypes, values)
	diags.Append(d...)
	return o
}

// ObjectAs reads a known, non-null object into target (a model struct); it
// reports false for null or unknown, and whenever diags holds an error
// (this read's or an earlier one), so a caller checks nothing more on a
// configuration already refused.
func ObjectAs(ctx context.Context, o types.Object, target any, diags *diag.Diagnostics) bool {
	if o.IsNull() || o.IsUnknown() {
		return false
	}
	diags.Append(As(ctx, o, target)...)
	return !diags.HasError()
}

// NonNilSlice is s, or an empty slice for nil (an empty list, not null,
// when converted).
func NonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NonNilMap is m, or an empty map for nil.
func NonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// EqualOrBothEmpty reports whether two collection values (lists, sets,
// maps) are equal, counting null and empty as the same.
func EqualOrBothEmpty(a, b attr.Value) bool {
	if size(a) == 0 && size(b) == 0 {
		return true
	}
	return a.Equal(b)
}

// size is the number of elements of a known collection, 0 for null; -1
// for unknown or a value that is not a collection.
func size(v attr.Value) int {
	if v.IsUnknown() {
		return -1
	}
	switch c := v.(type) {
	case types.List:
		return len(c.Elements())
	case types.Set:
		return len(c.Elements())
	case types.Map:
		return len(c.Elements())
	}
	return -1
}
