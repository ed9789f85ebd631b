package validators_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

func runString(v validator.String, val types.String) *validator.StringResponse {
	resp := &validator.StringResponse{}
	v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("x"), ConfigValue: val}, resp)
	return resp
}

func TestCheck(t *testing.T) {
	notA := validators.Check{Desc: "anything but a", Problem: func(s string) string {
		if s == "a" {
			return "a is not allowed here."
		}
		return ""
	}}
	if got := notA.Description(context.Background()); got != "anything but a" {
		t.Errorf("Description = %q", got)
	}
	resp := runString(notA, types.StringValue("a"))
	if !resp.Diagnostics.HasError() {
		t.Fatal("a passed")
	}
	d := resp.Diagnostics.Errors()[0]
	if d.Summary() != "Invalid value" || d.Detail() != "a is not allowed here." {
		t.Errorf("diagnostic = %q / %q", d.Summary(), d.Detail())
	}
	for _, ok := range []types.String{types.StringValue("b"), types.StringNull(), types.StringUnknown()} {
		if resp := runString(notA, ok); resp.Diagnostics.HasError() {
			t.Errorf("%v refused: %v", ok, resp.Diagnostics)
		}
	}
}

func TestValid(t *testing.T) {
	short := validators.Valid("Too long", "must be at most 3 characters", func(s string) bool { return len(s) <= 3 })
	resp := runString(short, types.StringValue("abcd"))
	if !resp.Diagnostics.HasError() {
		t.Fatal("abcd passed")
	}
	if d := resp.Diagnostics.Errors()[0]; d.Summary() != "Too long" || d.Detail() != `"abcd" must be at most 3 characters.` {
		t.Errorf("diagnostic = %q / %q", d.Summary(), d.Detail())
	}
	if resp := runString(short, types.StringValue("abc")); resp.Diagnostics.HasError() {
		t.Errorf("abc refused: %v", resp.Diagnostics)
	}
}
