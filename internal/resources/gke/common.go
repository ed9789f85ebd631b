package gke

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// GKE's own marks on gVisor node pools, and the sandbox and image types
// this provider manages. MICROVM is SandboxConfig.type's third value in
// GKE's published API (container/v1 discovery document, revision 20261027,
// schema SandboxConfig: "Run sandbox using MicroVM"); nothing else about
// MicroVM pools is published there or in GKE's public documentation
// reachable when this was written (see node_pool_schema.go).
const (
	sandboxKey     = "sandbox.gke.io/runtime"
	sandboxValue   = "gvisor"
	sandboxGVisor  = "GVISOR"
	sandboxMicroVM = "MICROVM"
	imageCOS       = "COS_CONTAINERD"
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

// begin starts a create, update or delete of a GKE resource: the
// provider's container API client, and ctx bounded by the resource's
// timeouts block for op (def when it leaves op out). When either fails, or
// diags already holds an error (a project that could not be resolved), ok
// is false; cancel is always safe to call.
func begin(ctx context.Context, meta *conn.Meta, t timeouts.Value, op object.Operation, def time.Duration,
	diags *diag.Diagnostics) (_ context.Context, cancel context.CancelFunc, client *gkeapi.Client, ok bool) {
	client, d := gkeClient(ctx, meta)
	diags.Append(d...)
	ctx, cancel, ok = object.Deadline(ctx, t, op, def, diags)
	if !ok || diags.HasError() {
		cancel()
		return ctx, func() {}, nil, false
	}
	return ctx, cancel, client, true
}

// planInputs reads a GKE resource's plan, configuration and state
// (object.PlanInputs) and plans its project, which project gives of a
// model, when the configuration leaves it out: the provider's
// gke.project, else the one in state. A project that changes replaces the
// resource. ok is false on destroy, with unreadable inputs, and when there
// is no project to plan (with the error at the attribute).
func planInputs[M any](ctx context.Context, meta *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse,
	project func(*M) *types.String) (plan, config M, state *M, ok bool) {
	plan, config, state, ok = object.PlanInputs[M](ctx, req, &resp.Diagnostics)
	if !ok {
		return plan, config, state, false
	}
	planned := project(&plan)
	if project(&config).IsNull() {
		switch {
		case meta != nil && meta.GKEProject() != "":
			*planned = types.StringValue(meta.GKEProject())
		case state != nil:
			*planned = *project(state)
		default:
			resp.Diagnostics.AddAttributeError(path.Root("project"), "No GKE project",
				"Set this resource's project, or the provider's gke.project (or GOOGLE_PROJECT), so the provider "+
					"knows which project the cluster is in.")
			return plan, config, state, false
		}
	}
	if state != nil && !planned.IsUnknown() && !planned.Equal(*project(state)) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("project"))
	}
	return plan, config, state, true
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

// orZero is *p, or the zero message when p is nil: the container API
// leaves out a message whose fields are all empty.
func orZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
