package isolationreport

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// ReportCounts reads one report of namespace ns and returns how many
// sandboxes and pods it has, for the external acceptance tests.
func ReportCounts(ctx context.Context, c *kube.Client, ns string) (sandboxes, pods int64, err error) {
	inv, diags := read(ctx, c, ns, defaultRouterNamespace)
	if diags.HasError() {
		return 0, 0, errorOf(diags)
	}
	r := analyze(inv, nil)
	return r.Summary.Sandboxes, r.Summary.Pods, nil
}

// errorOf joins the errors of diags into one error.
func errorOf(diags diag.Diagnostics) error {
	var msgs []string
	for _, d := range diags.Errors() {
		msgs = append(msgs, d.Summary()+": "+d.Detail())
	}
	return errors.New(strings.Join(msgs, "; "))
}
