package blueprint

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// RefusePastShutdownTime refuses, when planning a new object, a
// shutdown_time that has already passed: the controller would expire what
// it has just created (a claim at once reports ClaimExpired and, with
// shutdown_policy Delete, is deleted, which the next plan would undo). what
// names the object ("sandbox", "claim"). A time that passes between plan and
// apply is not judged here.
func RefusePastShutdownTime(shutdown types.String, what string, now time.Time) diag.Diagnostics {
	var diags diag.Diagnostics
	if shutdown.IsNull() || shutdown.IsUnknown() {
		return diags
	}
	t, err := time.Parse(time.RFC3339, shutdown.ValueString())
	if err != nil || t.After(now) {
		return diags // a malformed time is the attribute validator's
	}
	diags.AddAttributeError(path.Root("shutdown_time"), "Shutdown time in the past",
		fmt.Sprintf("%q has already passed (it is now %s), so the controller would expire the new %s as soon as it "+
			"is created (and with shutdown_policy \"Delete\", delete it, which the next plan would undo). Set a future "+
			"time or remove shutdown_time.", shutdown.ValueString(), now.UTC().Format(time.RFC3339), what))
	return diags
}
