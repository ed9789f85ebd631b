package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestValueValidators covers the quantity, resource name, network and time
// validators: accepted and refused spellings, null/unknown left alone, and
// the attribute path carried by every error.
func TestValueValidators(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    validator.String
		in   types.String
		ok   bool
	}{
		{"quantity milli", Quantity(), types.StringValue("500m"), true},
		{"quantity binary", Quantity(), types.StringValue("1Gi"), true},
		{"quantity exponent", Quantity(), types.StringValue("1e3"), true},
		{"quantity negative", Quantity(), types.StringValue("-1"), true},
		{"quantity bad suffix", Quantity(), types.StringValue("1Gx"), false},
		{"quantity empty", Quantity(), types.StringValue(""), false},
		{"quantity words", Quantity(), types.StringValue("lots"), false},
		{"quantity null", Quantity(), types.StringNull(), true},
		{"quantity unknown", Quantity(), types.StringUnknown(), true},
		{"non-negative ok", NonNegativeQuantity(), types.StringValue("0"), true},
		{"non-negative negative", NonNegativeQuantity(), types.StringValue("-1Mi"), false},
		{"non-negative bad", NonNegativeQuantity(), types.StringValue("1Gx"), false},
		{"resource cpu", ResourceName(), types.StringValue("cpu"), true},
		{"resource storage", ResourceName(), types.StringValue("ephemeral-storage"), true},
		{"resource hugepages", ResourceName(), types.StringValue("hugepages-2Mi"), true},
		{"resource hugepages bad", ResourceName(), types.StringValue("hugepages-big"), false},
		{"resource extended", ResourceName(), types.StringValue("nvidia.com/gpu"), true},
		{"resource unprefixed", ResourceName(), types.StringValue("gpu"), false},
		{"resource typo", ResourceName(), types.StringValue("CPU"), false},
		{"port name", PortName(), types.StringValue("http"), true},
		{"port name digits only", PortName(), types.StringValue("8080"), false},
		{"port name too long", PortName(), types.StringValue("a-very-long-port-name"), false},
		{"port name upper", PortName(), types.StringValue("HTTP"), false},
		{"ip v4", IPAddress(), types.StringValue("8.8.8.8"), true},
		{"ip v6", IPAddress(), types.StringValue("fd00::a"), true},
		{"ip bad", IPAddress(), types.StringValue("8.8.8"), false},
		{"ip host name", IPAddress(), types.StringValue("dns.google"), false},
		{"rfc3339 utc", RFC3339(), types.StringValue("2030-01-02T15:04:05Z"), true},
		{"rfc3339 offset", RFC3339(), types.StringValue("2030-01-02T17:04:05+02:00"), true},
		{"rfc3339 date only", RFC3339(), types.StringValue("2030-01-02"), false},
		{"rfc3339 space", RFC3339(), types.StringValue("2030-01-02 15:04:05"), false},
		{"rfc3339 null", RFC3339(), types.StringNull(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := path.Root("spec").AtName("value")
			resp := &validator.StringResponse{}
			tc.v.ValidateString(context.Background(), validator.StringRequest{Path: p, ConfigValue: tc.in}, resp)
			if got := !resp.Diagnostics.HasError(); got != tc.ok {
				t.Fatalf("ok = %v, want %v (%v)", got, tc.ok, resp.Diagnostics)
			}
			if !tc.ok {
				d := resp.Diagnostics[0].(interface{ Path() path.Path })
				if !d.Path().Equal(p) {
					t.Errorf("error path %s, want %s", d.Path(), p)
				}
			}
			if tc.v.Description(context.Background()) == "" || tc.v.MarkdownDescription(context.Background()) == "" {
				t.Error("validator has no description")
			}
		})
	}
}

// TestQuantitySuggestion: byte-style and mis-cased units get the spelling
// Kubernetes means; values with no obvious intent get none.
func TestQuantitySuggestion(t *testing.T) {
	for in, want := range map[string]string{
		"1Gb": "1Gi", "1GB": "1Gi", "512MB": "512Mi", "512mb": "512Mi", "2 Gi": "2Gi", "1gi": "1Gi",
		"1GiB": "1Gi", "100KB": "100Ki", "1.5Tb": "1.5Ti", "1K": "1Ki", "4gigabytes": "",
		"lots": "", "": "", "1Gx": "", "Gi": "",
	} {
		if got := QuantitySuggestion(in); got != want {
			t.Errorf("QuantitySuggestion(%q) = %q, want %q", in, got, want)
		}
	}
	resp := &validator.StringResponse{}
	NonNegativeQuantity().ValidateString(context.Background(), validator.StringRequest{
		Path: path.Root("memory"), ConfigValue: types.StringValue("1Gb"),
	}, resp)
	if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics[0].Detail(), `did you mean "1Gi"`) {
		t.Errorf("1Gb: %v", resp.Diagnostics)
	}
}
