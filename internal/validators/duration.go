// Package validators holds the provider's attribute validators, for every
// resource family: durations, timestamps, Kubernetes names, labels and
// quantities, CIDRs and ports, image references, paths and environment
// variables, the controller's rules for a claim's pod metadata, and GKE's
// names and reserved keys. A family's schema only picks them; a one-off
// string rule is a Check or Valid built in place.
package validators

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Duration accepts a Go duration string ("30s", "1m30s") greater than zero.
func Duration() validator.String {
	return Valid("Invalid duration", "must be a Go duration such as 30s or 2m, greater than zero", func(s string) bool {
		d, err := time.ParseDuration(s)
		return err == nil && d > 0
	})
}
