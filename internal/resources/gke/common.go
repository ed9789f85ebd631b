package gke

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
)

// GKE's own marks on gVisor node pools, and the only sandbox and image
// types this provider manages.
const (
	sandboxKey    = "sandbox.gke.io/runtime"
	sandboxValue  = "gvisor"
	sandboxGVisor = "GVISOR"
	imageCOS      = "COS_CONTAINERD"
)

// Default timeouts. Node pool operations take minutes on GKE (creating
// VMs, draining and recreating nodes on updates); the add-on is a control
// plane change.
const (
	defaultNodePoolTimeout = 30 * time.Minute
	defaultAddonTimeout    = 20 * time.Minute
)

// resolveProject returns the project a resource is in: its own attribute,
// else the provider's gke.project. The error names the attribute.
func resolveProject(configured types.String, meta *conn.Meta) (string, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !configured.IsNull() && !configured.IsUnknown() && configured.ValueString() != "" {
		return configured.ValueString(), diags
	}
	if meta != nil && meta.GKEProject() != "" {
		return meta.GKEProject(), diags
	}
	diags.AddAttributeError(path.Root("project"), "No GKE project",
		"Set this resource's project, or the provider's gke.project (or GOOGLE_PROJECT), so the provider knows "+
			"which project the cluster is in.")
	return "", diags
}

// gkeClient returns the provider's shared container API client.
func gkeClient(ctx context.Context, meta *conn.Meta) (*gkeapi.Client, diag.Diagnostics) {
	if meta == nil {
		var diags diag.Diagnostics
		diags.AddError("Provider not configured",
			"The agentsandbox provider was not configured before this resource was used. This is a bug in the provider; please report it.")
		return nil, diags
	}
	return meta.GKE(ctx)
}

// defaultRequestBudget bounds a single read made outside the operation's
// own deadline (recording state after a failed update).
const defaultRequestBudget = 30 * time.Second
