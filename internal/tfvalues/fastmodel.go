package tfvalues

import (
	"context"
	"maps"
	"reflect"
	"regexp"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Reading an object into a model struct and building one from it, without
// the framework's reflection round trip when nothing needs converting.
//
// The framework's ObjectValue.As and ObjectValueFrom go through Terraform's
// own value representation: every attribute value is turned into a
// tftypes.Value and back, the whole attribute type is rebuilt for each
// check (ObjectType.TerraformType allocates the type tree on every call),
// and the struct tags are validated with a regular expression compiled
// anew for every field (internal/reflect/helpers.go:135 in
// terraform-plugin-framework v1.19.0). For the pod template (a type of
// about 350 nodes) that was a third of the provider's CPU per planned
// template. Models here hold framework values (types.String, types.List,
// types.Object, ...) in every field, so no conversion is needed: the value
// in the object is the value the framework would have put in the field.
// Whenever that is not the case (a field of another Go type, a value of a
// custom type, a missing attribute, a null or unknown object) the
// framework's own path runs, with its exact result and diagnostics.

// modelFields is what a model struct's tags say: attribute name to field
// index (a path through embedded structs), or ok false when the framework
// must do the work: a field that is not a framework value, or tags the
// framework refuses (it then says why). The rules are the framework's
// (getStructTags, internal/reflect/helpers.go:61-133 in v1.19.0):
// unexported fields are skipped, embedded structs (by value, untagged)
// contribute their fields, every other exported field needs a tag.
type modelFields struct {
	index map[string][]int
	ok    bool
}

var (
	modelCache     sync.Map // reflect.Type -> modelFields
	attrValueType  = reflect.TypeFor[attr.Value]()
	validFieldName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

func fieldsOf(t reflect.Type) modelFields {
	if v, ok := modelCache.Load(t); ok {
		return v.(modelFields) //nolint:forcetypeassert // only modelFields is stored
	}
	f := modelFields{index: map[string][]int{}}
	f.ok = collectFields(t, nil, f.index)
	modelCache.Store(t, f)
	return f
}

func collectFields(t reflect.Type, at []int, into map[string][]int) bool {
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		tag, tagged := sf.Tag.Lookup("tfsdk")
		if tag == "-" {
			continue
		}
		idx := append(append([]int{}, at...), i)
		if sf.Anonymous {
			if tagged || sf.Type.Kind() != reflect.Struct || !collectFields(sf.Type, idx, into) {
				return false
			}
			continue
		}
		if !tagged || !validFieldName.MatchString(tag) || sf.Type.Kind() == reflect.Interface || !sf.Type.Implements(attrValueType) {
			return false
		}
		if _, dup := into[tag]; dup {
			return false
		}
		into[tag] = idx
	}
	return true
}

// As reads the known, non-null object o into target, a pointer to a model
// struct, exactly as o.As(ctx, target, basetypes.ObjectAsOptions{}) does.
func As(ctx context.Context, o basetypes.ObjectValue, target any) diag.Diagnostics {
	if fastAs(o, target) {
		return nil
	}
	return o.As(ctx, target, basetypes.ObjectAsOptions{})
}

func fastAs(o basetypes.ObjectValue, target any) bool {
	if o.IsNull() || o.IsUnknown() {
		return false
	}
	p := reflect.ValueOf(target)
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return false
	}
	s := p.Elem()
	f := fieldsOf(s.Type())
	attrs := o.Attributes()
	if !f.ok || len(attrs) != len(f.index) {
		return false
	}
	// Check every field before setting any, so that the framework's path
	// starts from the target as the caller passed it.
	for name, i := range f.index {
		v, ok := attrs[name]
		if !ok || v == nil || reflect.TypeOf(v) != s.Type().FieldByIndex(i).Type {
			return false
		}
	}
	for name, i := range f.index {
		s.FieldByIndex(i).Set(reflect.ValueOf(attrs[name]))
	}
	return true
}

// ObjectFrom builds an object of type t from model (a model struct or a
// pointer to one), exactly as types.ObjectValueFrom(ctx, t.AttrTypes,
// model) does.
func ObjectFrom(ctx context.Context, t types.ObjectType, model any) (types.Object, diag.Diagnostics) {
	if o, ok := fastObject(ctx, t, model); ok {
		return o, nil
	}
	return types.ObjectValueFrom(ctx, t.AttrTypes, model)
}

func fastObject(ctx context.Context, t types.ObjectType, model any) (types.Object, bool) {
	s := reflect.ValueOf(model)
	if s.Kind() == reflect.Pointer {
		if s.IsNil() {
			return types.Object{}, false
		}
		s = s.Elem()
	}
	if s.Kind() != reflect.Struct {
		return types.Object{}, false
	}
	f := fieldsOf(s.Type())
	if !f.ok || len(f.index) != len(t.AttrTypes) {
		return types.Object{}, false
	}
	values := make(map[string]attr.Value, len(f.index))
	for name, at := range t.AttrTypes {
		i, ok := f.index[name]
		if !ok || at == nil {
			return types.Object{}, false
		}
		v, ok := s.FieldByIndex(i).Interface().(attr.Value)
		if !ok || v == nil || !valid(ctx, name, at, v) {
			return types.Object{}, false
		}
		values[name] = v
	}
	// NewObjectValue checks each value's type against the attribute type
	// (the framework's path checks the Terraform types, which a custom
	// type may share with another: such a value goes the framework's way).
	o, d := types.ObjectValue(t.AttrTypes, values)
	if d.HasError() {
		return types.Object{}, false
	}
	return o, true
}

// valid runs the checks the framework runs on each field while converting
// (a value's ValidateAttribute, a type's Validate: that an Int64 holds an
// integer, the elements of a list of them, ...). Any diagnostic at all
// sends the model the framework's way, which reports it.
func valid(ctx context.Context, name string, at attr.Type, v attr.Value) bool {
	if !at.Equal(v.Type(ctx)) {
		return false // the framework names the mismatch
	}
	if va, ok := v.(xattr.ValidateableAttribute); ok {
		var resp xattr.ValidateAttributeResponse
		va.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: path.Root(name)}, &resp)
		return len(resp.Diagnostics) == 0
	}
	//nolint:staticcheck // xattr.TypeWithValidate is deprecated, but the framework still runs it.
	if tv, ok := at.(xattr.TypeWithValidate); ok {
		raw, err := v.ToTerraformValue(ctx)
		return err == nil && len(tv.Validate(ctx, raw, path.Root(name))) == 0
	}
	return true
}

// GetConfig, GetPlan and GetState read a whole configuration, plan or
// state into target (a pointer to the resource's model), exactly as their
// Get methods do, converting Terraform's value once.
func GetConfig(ctx context.Context, c tfsdk.Config, target any) diag.Diagnostics {
	if fastGet(ctx, c.Schema.Type(), c.Raw, target) {
		return nil
	}
	return c.Get(ctx, target)
}

func GetPlan(ctx context.Context, p tfsdk.Plan, target any) diag.Diagnostics {
	if fastGet(ctx, p.Schema.Type(), p.Raw, target) {
		return nil
	}
	return p.Get(ctx, target)
}

func GetState(ctx context.Context, s tfsdk.State, target any) diag.Diagnostics {
	if fastGet(ctx, s.Schema.Type(), s.Raw, target) {
		return nil
	}
	return s.Get(ctx, target)
}

func fastGet(ctx context.Context, typ attr.Type, raw tftypes.Value, target any) bool {
	if raw.IsNull() || !raw.IsKnown() {
		return false
	}
	v, err := ValueFromTerraform(ctx, typ, raw)
	if err != nil {
		return false
	}
	o, ok := v.(basetypes.ObjectValue)
	return ok && fastAs(o, target)
}

// SetState replaces the whole state with model, exactly as s.Set(ctx,
// model) does.
//
// Set of a Terraform value checks its type against the schema's and keeps it
// (fwschemadata/data_set.go:21-35 in v1.19.0); the value here is built from
// that very type (toTerraform), so it is kept as it is.
func SetState(ctx context.Context, s *tfsdk.State, model any) diag.Diagnostics {
	if t, ok := s.Schema.Type().(basetypes.ObjectType); ok {
		if o, ok := fastObject(ctx, t, model); ok {
			if v, err := toTerraform(ctx, o, t.TerraformType(ctx)); err == nil {
				s.Raw = v
				return nil
			}
		}
	}
	return s.Set(ctx, model)
}

// SetPlanAttribute sets the attribute at p of the plan to v unless it
// holds v already. The framework's SetAttribute rebuilds the whole plan
// value, whatever it sets: for a resource with a large nested attribute
// that is a good part of a ModifyPlan, and with no change it is all waste.
//
// A top-level attribute is set in the plan's Terraform value directly (its
// object rebuilt with one attribute replaced), when v's Terraform type is
// the attribute's and neither v nor its type validates itself; the
// framework's SetAttribute (fwschemadata.Data.SetAtPath, v1.19.0) would
// resolve the path through the schema (copying its attribute map on every
// step), convert v and rebuild every value of the plan with
// tftypes.Transform, to the same result (TestSetPlanAttribute_sameAsTheFramework): 13 % of the
// provider's CPU in an update of 600 objects.
func SetPlanAttribute(ctx context.Context, plan *tfsdk.Plan, p path.Path, v attr.Value) diag.Diagnostics {
	if raw, ok := setTopLevel(ctx, plan.Raw, p, v); ok {
		plan.Raw = raw
		return nil
	}
	var cur attr.Value
	if d := plan.GetAttribute(ctx, p, &cur); !d.HasError() && cur != nil && cur.Equal(v) {
		return nil
	}
	return plan.SetAttribute(ctx, p, v)
}

// setTopLevel returns obj with its top-level attribute p set to v, or ok
// false when p is not a top-level attribute obj (a known object) has, when
// v's Terraform type is not that attribute's, or when v or its type
// validates itself (the framework's SetAttribute calls that validation).
func setTopLevel(ctx context.Context, obj tftypes.Value, p path.Path, v attr.Value) (tftypes.Value, bool) {
	steps := p.Steps()
	if len(steps) != 1 || v == nil || obj.IsNull() || !obj.IsKnown() {
		return obj, false
	}
	name, ok := steps[0].(path.PathStepAttributeName)
	if !ok {
		return obj, false
	}
	if _, ok := v.(xattr.ValidateableAttribute); ok {
		return obj, false
	}
	//nolint:staticcheck // the framework still calls the deprecated TypeWithValidate
	if _, ok := v.Type(ctx).(xattr.TypeWithValidate); ok {
		return obj, false
	}
	var attrs map[string]tftypes.Value
	if obj.As(&attrs) != nil {
		return obj, false
	}
	cur, ok := attrs[string(name)]
	if !ok {
		return obj, false
	}
	tv, err := v.ToTerraformValue(ctx)
	if err != nil || !tv.Type().Equal(cur.Type()) {
		return obj, false
	}
	if cur.Equal(tv) {
		return obj, true
	}
	// As hands out the value's own map: a new one, so that every other
	// holder of obj (the prior state, the request's plan) keeps its value.
	out := maps.Clone(attrs)
	out[string(name)] = tv
	return tftypes.NewValue(obj.Type(), out), true
}

// RawAttributeEqual reports whether two values of the same object type
// (a plan and the prior state) hold the same value for their top-level
// attribute name, comparing Terraform's values without converting them to
// framework values; false when either cannot be read.
func RawAttributeEqual(a, b tftypes.Value, name string) bool {
	if a.IsNull() || b.IsNull() || !a.IsKnown() || !b.IsKnown() {
		return false
	}
	var am, bm map[string]tftypes.Value
	if a.As(&am) != nil || b.As(&bm) != nil {
		return false
	}
	av, okA := am[name]
	bv, okB := bm[name]
	return okA && okB && av.Equal(bv)
}
