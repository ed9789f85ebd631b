package blueprint

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestValidateServiceName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name    types.String
		service types.Bool
		want    string // part of the suggested name; "" when accepted
	}{
		{types.StringValue("agent-1"), types.BoolValue(true), ""},
		{types.StringValue("agent.v1"), types.BoolValue(false), ""},
		{types.StringValue("agent.v1"), types.BoolNull(), ""},
		{types.StringValue("agent.v1"), types.BoolUnknown(), ""},
		{types.StringUnknown(), types.BoolValue(true), ""},
		{types.StringValue("agent.v1"), types.BoolValue(true), `"agent-v1"`},
		{types.StringValue("1agent"), types.BoolValue(true), `"sandbox-1agent"`},
		{types.StringValue(long), types.BoolValue(true), `"` + long[:63] + `"`},
	} {
		diags := ValidateServiceName(tc.name, tc.service)
		if tc.want == "" {
			if diags.HasError() {
				t.Errorf("%v/%v refused: %v", tc.name, tc.service, diags)
			}
			continue
		}
		if !diags.HasError() {
			t.Errorf("%v accepted", tc.name)
			continue
		}
		d := diags[0]
		if p, ok := d.(interface{ Path() path.Path }); !ok || !p.Path().Equal(path.Root("name")) {
			t.Errorf("%v: not on name: %v", tc.name, d)
		}
		if !strings.Contains(d.Detail(), tc.want) || !strings.Contains(d.Detail(), "service = false") {
			t.Errorf("%v: %s", tc.name, d.Detail())
		}
	}
}
