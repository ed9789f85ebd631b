package tfvalues

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// WholeNumberType is the framework's Int64 type with a message people can
// read when a configuration gives a fraction. The framework's own type
// fails to convert 1.5 and reports "This is always an error in the
// provider ... Value %!s(*big.Float=1.5) is not an integer" (v1.19); this
// one turns the fraction into a value whose validation says which attribute
// needs a whole number and what was given.
//
// Whole numbers convert to plain basetypes.Int64Value, so models keep
// types.Int64 fields, and the type is Equal to basetypes.Int64Type.
type WholeNumberType struct {
	basetypes.Int64Type
}

var _ basetypes.Int64Typable = WholeNumberType{}

// Equal accepts the framework's Int64 type too: values are plain Int64.
func (t WholeNumberType) Equal(o attr.Type) bool {
	switch o.(type) {
	case WholeNumberType, basetypes.Int64Type:
		return true
	}
	return false
}

func (t WholeNumberType) String() string { return "tfvalues.WholeNumberType" }

// ValueFromTerraform is Int64Type's, except that a number with a fraction
// becomes a fractionValue that fails validation with a real message.
func (t WholeNumberType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	if in.IsKnown() && !in.IsNull() && in.Type().Is(tftypes.Number) {
		var f *big.Float
		if err := in.As(&f); err == nil && f != nil && !f.IsInt() {
			return fractionValue{Int64Value: basetypes.NewInt64Unknown(), given: f.Text('g', -1)}, nil
		}
	}
	return t.Int64Type.ValueFromTerraform(ctx, in)
}

// fractionValue stands for a configured number with a fraction; it is never
// valid, so nothing beyond validation ever sees it.
type fractionValue struct {
	basetypes.Int64Value
	given string
}

var _ xattr.ValidateableAttribute = fractionValue{}

func (v fractionValue) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	resp.Diagnostics.AddAttributeError(req.Path, "Not a whole number", FractionDetail(req.Path.String(), v.given))
}

// FractionDetail is the detail of the "Not a whole number" error: where
// (the attribute's path as configurations spell it), what was given, and
// the two nearest integers. Package nestedattr uses it for nested
// integers, which keep the framework's type.
func FractionDetail(path, given string) string {
	return fmt.Sprintf("%s must be a whole number; %s has a fractional part. Give an integer such as %s.",
		path, given, wholeExamples(given))
}

func wholeExamples(given string) string {
	f, _, err := big.ParseFloat(given, 10, 64, big.ToNearestEven)
	if err != nil {
		return "1"
	}
	floor, _ := f.Int(nil) // truncated towards zero
	if f.Sign() < 0 {
		floor.Sub(floor, big.NewInt(1))
	}
	ceil := new(big.Int).Add(floor, big.NewInt(1))
	return fmt.Sprintf("%s or %s", floor, ceil)
}

// wholeNumbers gives every top-level Int64 attribute without a CustomType
// the WholeNumberType. Nested attributes keep the framework's type: their
// object types are also built by hand in models, and basetypes.Int64Type is
// not Equal to a custom type in that direction.
func wholeNumbers(attrs map[string]schema.Attribute) {
	for name, a := range attrs {
		if ia, ok := a.(schema.Int64Attribute); ok && ia.CustomType == nil {
			ia.CustomType = WholeNumberType{}
			attrs[name] = ia
		}
	}
}
