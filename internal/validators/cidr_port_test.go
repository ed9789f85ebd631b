package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestParseCIDR(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string // substring; "" means valid
	}{
		{"10.0.0.0/8", ""},
		{"0.0.0.0/0", ""},
		{"169.254.169.254/32", ""},
		{"::/0", ""},
		{"fd00:ec2::254/128", ""},
		{"2001:db8::/32", ""},
		{"10.0.0.1/8", `write "10.0.0.0/8" for the range, or "10.0.0.1/32"`},
		{"2001:db8::1/32", `write "2001:db8::/32"`},
		{"FD00::/8", `canonical form: write "fd00::/8"`},
		{"2001:0db8::/32", `canonical form: write "2001:db8::/32"`},
		{"::ffff:10.0.0.0/104", "IPv4-mapped"},
		{"010.0.0.0/8", "not a CIDR"},
		{"10.0.0.0", "not a CIDR"},
		{"10.0.0.0/33", "not a CIDR"},
		{"", "not a CIDR"},
		{"fe80::1%eth0/64", "not a CIDR"},
	} {
		_, err := ParseCIDR(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseCIDR(%q): %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseCIDR(%q) = %v, want an error containing %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestParsePort(t *testing.T) {
	for _, tc := range []struct {
		in      string
		num     int32
		name    string
		wantErr string
	}{
		{"1", 1, "", ""},
		{"8888", 8888, "", ""},
		{"65535", 65535, "", ""},
		{"http", 0, "http", ""},
		{"dns-tcp", 0, "dns-tcp", ""},
		{"0", 0, "", "1 to 65535"},
		{"70000", 0, "", "1 to 65535"},
		{"99999999999999999999", 0, "", "1 to 65535"},
		{"080", 0, "", "write 80"},
		{"-1", 0, "", "port name"},
		{"HTTP", 0, "", "port name"},
		{"a-very-long-port-name", 0, "", "port name"},
		{"", 0, "", "port name"},
	} {
		num, name, err := ParsePort(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePort(%q) = %v, want an error containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || num != tc.num || name != tc.name {
			t.Errorf("ParsePort(%q) = %d, %q, %v", tc.in, num, name, err)
		}
	}
}

func TestNetworkValidatorsCarryThePath(t *testing.T) {
	p := path.Root("allow_egress").AtListIndex(2).AtName("cidr")
	for _, tc := range []struct {
		v        validator.String
		in       string
		ok       bool
		inDetail string
	}{
		{CIDR(), "10.0.0.0/8", true, ""},
		{CIDR(), "10.0.0.1/8", false, `"10.0.0.0/8"`},
		{Port(), "443", true, ""},
		{Port(), "0", false, "1 to 65535"},
		{Protocol(), "UDP", true, ""},
		{Protocol(), "udp", false, `write "UDP"`},
		{Protocol(), "ICMP", false, "TCP, UDP, SCTP"},
	} {
		resp := &validator.StringResponse{}
		tc.v.ValidateString(context.Background(), validator.StringRequest{Path: p, ConfigValue: types.StringValue(tc.in)}, resp)
		if resp.Diagnostics.HasError() == tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.in, resp.Diagnostics, tc.ok)
			continue
		}
		if tc.ok {
			continue
		}
		assertPath(t, resp.Diagnostics, "allow_egress[2].cidr")
		if d := resp.Diagnostics[0].Detail(); !strings.Contains(d, tc.inDetail) {
			t.Errorf("%q: detail %q lacks %q", tc.in, d, tc.inDetail)
		}
	}
	// Null and unknown values are left to Required/Optional and later plans.
	for _, v := range []validator.String{CIDR(), Port(), Protocol()} {
		for _, in := range []types.String{types.StringNull(), types.StringUnknown()} {
			resp := &validator.StringResponse{}
			v.ValidateString(context.Background(), validator.StringRequest{Path: p, ConfigValue: in}, resp)
			if resp.Diagnostics.HasError() {
				t.Errorf("%v: %v", in, resp.Diagnostics)
			}
		}
	}
}
