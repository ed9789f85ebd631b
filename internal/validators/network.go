package validators

import (
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PortName accepts an IANA service name as Kubernetes uses for named ports:
// at most 15 lower-case alphanumerics or '-', with at least one letter and no
// leading, trailing or doubled '-'.
func PortName() validator.String {
	return stringCheck{
		summary: "Invalid port name",
		desc:    "must be an IANA service name: at most 15 lower-case letters, digits or '-', with at least one letter",
		check:   k8svalidation.IsValidPortName,
	}
}

// IPAddress accepts an IPv4 or IPv6 address in canonical form.
func IPAddress() validator.String {
	return stringCheck{
		summary: "Invalid IP address",
		desc:    "must be an IPv4 or IPv6 address such as 10.0.0.10 or fd00::a",
		check: func(s string) []string {
			var out []string
			for _, e := range k8svalidation.IsValidIP(field.NewPath("ip"), s) {
				out = append(out, e.Detail)
			}
			return out
		},
	}
}
