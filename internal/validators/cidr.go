package validators

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// ParseCIDR parses an IPv4 or IPv6 CIDR and insists on the canonical form
// ("10.0.0.0/8", "fd00:ec2::254/128"). The API server (StrictIPCIDRValidation,
// on by default since Kubernetes 1.36) refuses leading zeros, IPv4-mapped
// IPv6 ranges and bits set beyond the prefix length; other non-canonical
// spellings ("FD00::/8") it stores as written, so accepting them would let
// one range compare unequal to itself and show as a diff forever. The error
// names the form that was probably meant.
func ParseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		return netip.Prefix{}, errors.New("not a CIDR such as 10.0.0.0/8 or 2001:db8::/32")
	case p.Addr().Is4In6():
		return netip.Prefix{}, errors.New("an IPv4-mapped IPv6 range, which Kubernetes refuses: write the IPv4 range instead")
	case p.Masked() != p:
		return netip.Prefix{}, fmt.Errorf("bits are set beyond the prefix length: write %q for the range, or %q for the single address",
			p.Masked().String(), netip.PrefixFrom(p.Addr(), p.Addr().BitLen()).String())
	case p.String() != s:
		return netip.Prefix{}, fmt.Errorf("not in canonical form: write %q", p.String())
	}
	return p, nil
}

// CIDR accepts an IPv4 or IPv6 CIDR in canonical form (see ParseCIDR).
func CIDR() validator.String {
	return stringCheck{
		summary: "Invalid CIDR",
		desc:    "must be an IPv4 or IPv6 CIDR in canonical form, e.g. 10.0.0.0/8 or 2001:db8::/32",
		check: func(s string) []string {
			if _, err := ParseCIDR(s); err != nil {
				return []string{err.Error()}
			}
			return nil
		},
	}
}
