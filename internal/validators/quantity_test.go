package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
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

// TestResourceListCPUMillicores: CPU finer than a millicore is refused at
// the map's "cpu" key with the value the API server would store; whole
// millicores, other resources, zero, invalid (the other validators') and
// unknown values are left alone.
func TestResourceListCPUMillicores(t *testing.T) {
	for in, want := range map[string]string{
		"100u": "1m", "0.0005": "1m", "1.0001": "1001m", "1500u": "2m", "1n": "1m",
		"1m": "", "0.5": "", "2": "", "100": "", "0": "", "1500m": "", "lots": "", "-1u": "",
	} {
		t.Run(in, func(t *testing.T) {
			p := path.Root("resources").AtName("limits")
			m := types.MapValueMust(types.StringType, map[string]attr.Value{"cpu": types.StringValue(in), "memory": types.StringValue("1.5")})
			resp := &validator.MapResponse{}
			cpuMillicores{}.ValidateMap(context.Background(), validator.MapRequest{Path: p, ConfigValue: m}, resp)
			if want == "" {
				if resp.Diagnostics.HasError() {
					t.Fatalf("refused: %v", resp.Diagnostics)
				}
				return
			}
			if len(resp.Diagnostics) != 1 {
				t.Fatalf("want one error, got %v", resp.Diagnostics)
			}
			d := resp.Diagnostics[0]
			if got := d.(interface{ Path() path.Path }).Path(); !got.Equal(p.AtMapKey("cpu")) {
				t.Errorf("path %s, want %s", got, p.AtMapKey("cpu"))
			}
			if !strings.Contains(d.Detail(), `cpu = "`+want+`"`) || !strings.Contains(d.Detail(), `limits["cpu"]`) {
				t.Errorf("detail %q does not name the path and suggest %q", d.Detail(), want)
			}
		})
	}
	for _, m := range []types.Map{types.MapNull(types.StringType), types.MapUnknown(types.StringType),
		types.MapValueMust(types.StringType, map[string]attr.Value{"cpu": types.StringUnknown()})} {
		resp := &validator.MapResponse{}
		cpuMillicores{}.ValidateMap(context.Background(), validator.MapRequest{Path: path.Root("x"), ConfigValue: m}, resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%v refused: %v", m, resp.Diagnostics)
		}
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
