package tfvalues_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// TestWholeNumberType: whole numbers are plain Int64 values; a fraction
// fails validation with the attribute's path, the value and the nearest
// integers instead of the framework's "always an error in the provider".
func TestWholeNumberType(t *testing.T) {
	ctx := context.Background()
	typ := tfvalues.WholeNumberType{}
	if !typ.Equal(types.Int64Type) || !typ.Equal(tfvalues.WholeNumberType{}) || typ.Equal(types.StringType) {
		t.Error("Equal")
	}
	v, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(tftypes.Number, big.NewFloat(3)))
	if err != nil || v != types.Int64Value(3) {
		t.Errorf("3: %#v, %v", v, err)
	}
	for _, in := range []tftypes.Value{tftypes.NewValue(tftypes.Number, nil), tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)} {
		if v, err := typ.ValueFromTerraform(ctx, in); err != nil || (!v.IsNull() && !v.IsUnknown()) {
			t.Errorf("%v: %#v, %v", in, v, err)
		}
	}
	for given, want := range map[float64]string{1.5: "1 or 2", -0.5: "-1 or 0", 2.25: "2 or 3"} {
		v, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(tftypes.Number, big.NewFloat(given)))
		if err != nil {
			t.Fatal(err)
		}
		va, ok := v.(xattr.ValidateableAttribute)
		if !ok {
			t.Fatalf("%v: %T is not validated", given, v)
		}
		resp := &xattr.ValidateAttributeResponse{}
		va.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: path.Root("replicas")}, resp)
		if !resp.Diagnostics.HasError() {
			t.Fatalf("%v accepted", given)
		}
		d := resp.Diagnostics[0]
		text := d.Summary() + " " + d.Detail()
		for _, w := range []string{"replicas must be a whole number", want, "Not a whole number"} {
			if !strings.Contains(text, w) {
				t.Errorf("%v: %q lacks %q", given, text, w)
			}
		}
		if strings.Contains(text, "%!") || strings.Contains(text, "always an error") {
			t.Errorf("%v: %q", given, text)
		}
	}
}

// TestResourceGivesTopLevelIntegersWholeNumbers: only top-level Int64
// attributes change; a CustomType the schema sets is kept.
func TestPrecomputeTypesGivesTopLevelIntegersWholeNumbers(t *testing.T) {
	s := tfvalues.PrecomputeTypes(schema.Schema{Attributes: map[string]schema.Attribute{
		"replicas": schema.Int64Attribute{Optional: true},
		"nested": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"port": schema.Int64Attribute{Optional: true},
		}},
	}})
	if _, ok := s.Attributes["replicas"].GetType().(tfvalues.WholeNumberType); !ok {
		t.Errorf("replicas: %T", s.Attributes["replicas"].GetType())
	}
	n := s.Attributes["nested"].(schema.SingleNestedAttribute)
	if n.Attributes["port"].GetType() != types.Int64Type {
		t.Errorf("nested port: %T", n.Attributes["port"].GetType())
	}
}
