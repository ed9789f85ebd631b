// Package custom is read (never built) by TestCoverageCheck: custom checks
// written the two ways customChecks must find.
package custom

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

func direct(diags *diag.Diagnostics) {
	diags.AddAttributeError(path.Root("items"), "Toy items refused", "a direct call with a literal summary")
}

func errorf(diags *diag.Diagnostics, p path.Path, summary, detail string) {
	diags.AddAttributeWarning(p, summary, detail)
}

func wrapped(diags *diag.Diagnostics) {
	errorf(diags, path.Root("items"), "Toy wrapped warning", "through a wrapper whose summary is its parameter")
	diags.AddError("Toy without a path", "not a check: no attribute path")
}
