package validators

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		in      types.String
		wantErr bool
	}{
		{types.StringValue("30s"), false},
		{types.StringValue("1m30s"), false},
		{types.StringNull(), false},
		{types.StringUnknown(), false},
		{types.StringValue("30"), true},
		{types.StringValue("0s"), true},
		{types.StringValue("-5s"), true},
		{types.StringValue("soon"), true},
	} {
		resp := &validator.StringResponse{}
		Duration().ValidateString(context.Background(), validator.StringRequest{
			Path: path.Root("gke").AtName("request_timeout"), ConfigValue: tc.in,
		}, resp)
		if got := resp.Diagnostics.HasError(); got != tc.wantErr {
			t.Errorf("%s: error = %v, want %v (%v)", tc.in, got, tc.wantErr, resp.Diagnostics)
		}
		if tc.wantErr && resp.Diagnostics[0].(interface{ Path() path.Path }).Path().String() != "gke.request_timeout" {
			t.Errorf("%s: diagnostic lacks the attribute path", tc.in)
		}
	}
}
