// Package validators holds the provider's attribute validators, for every
// resource family: durations, timestamps, Kubernetes names, labels and
// quantities, CIDRs and ports, image references, paths and environment
// variables, the controller's rules for a claim's pod metadata, and GKE's
// names and reserved keys. A family's schema only picks them; a one-off
// string rule is a Check or Valid built in place.
package validators

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Duration accepts a Go duration string ("30s", "1m30s") greater than zero.
func Duration() validator.String { return durationValidator{} }

type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "must be a Go duration such as 30s or 2m, greater than zero"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v durationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%q %s.", req.ConfigValue.ValueString(), v.Description(ctx)))
	}
}
