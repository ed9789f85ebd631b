package validators

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// ParsePort reads a port the way Kubernetes' int-or-string port fields
// (NetworkPolicy ports, Service target ports) take it: a number from 1 to
// 65535, returned as number with name "", or a named port (IANA_SVC_NAME
// such as "http"), returned as name with number 0. Numbers must be decimal
// without leading zeros so that the value Terraform stores is the value the
// API server gives back.
func ParsePort(s string) (number int32, name string, err error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		n, perr := strconv.Atoi(s)
		switch {
		case perr != nil || n < 1 || n > 65535:
			return 0, "", fmt.Errorf("port numbers are 1 to 65535")
		case s[0] == '0':
			return 0, "", fmt.Errorf("a port number has no leading zero: write %d", n)
		}
		return int32(n), "", nil
	}
	if errs := k8svalidation.IsValidPortName(s); len(errs) > 0 {
		return 0, "", fmt.Errorf("not a port number (1-65535), and as a port name: %s", strings.Join(errs, "; "))
	}
	return 0, s, nil
}

// Port accepts a port number (1-65535) or a port name (IANA_SVC_NAME).
// Terraform converts a number literal (`port = 8080`) to the string "8080".
func Port() validator.String {
	return stringCheck{
		summary: "Invalid port",
		desc:    "must be a port number from 1 to 65535 or a port name such as http",
		check: func(s string) []string {
			if _, _, err := ParsePort(s); err != nil {
				return []string{err.Error()}
			}
			return nil
		},
	}
}

// Protocols are the transport protocols Kubernetes networking objects accept.
var Protocols = []string{"TCP", "UDP", "SCTP"}

// Protocol accepts one of Protocols, spelled as Kubernetes spells them: the
// API server refuses "tcp", so the message says which spelling was meant.
func Protocol() validator.String {
	return stringCheck{
		summary: "Invalid protocol",
		desc:    "must be one of " + strings.Join(Protocols, ", "),
		check: func(s string) []string {
			for _, p := range Protocols {
				if s == p {
					return nil
				}
			}
			for _, p := range Protocols {
				if strings.EqualFold(s, p) {
					return []string{fmt.Sprintf("protocol names are upper case: write %q", p)}
				}
			}
			return []string{"not a protocol Kubernetes knows"}
		},
	}
}
