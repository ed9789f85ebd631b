package controller

import (
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	shared "github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// installedModel is the part of the Terraform data that agentsandbox_controller
// and agentsandbox_sandbox_router share: both install a set of objects with
// the installer (install.go) and keep their inventory in state.
type installedModel struct {
	Inventory types.Map      `tfsdk:"inventory"`
	Timeouts  timeouts.Value `tfsdk:"timeouts"`
}

func (m *installedModel) installed() *installedModel { return m }

// inventory reads the state's inventory, in apply order.
func (m *installedModel) inventory(ctx context.Context) ([]inventoryEntry, diag.Diagnostics) {
	return inventoryOf(ctx, m.Inventory)
}

// installable is a pointer to a model that embeds installedModel.
type installable[M any] interface {
	*M
	installed() *installedModel
}

// installation is the Metadata, Configure, Create, Read, Update and Delete
// of a resource that installs objects with the installer, embedded in the
// resource; M is its model. What differs between the resources is in its
// functions, which the resource's constructor sets.
type installation[M any, P installable[M]] struct {
	shared.Configured
	// typeSuffix follows the provider's type name: "_sandbox_router".
	typeSuffix string
	// what names the installation in logs, e.g. "sandbox router".
	what string
	// apply installs plan's objects over prior, the inventory of state
	// (nil on create). It returns what was applied, even partly.
	apply func(ctx context.Context, plan, state P, prior []inventoryEntry) ([]inventoryEntry, diag.Diagnostics)
	// readImported reads an installation imported and not applied yet,
	// whose state has no inventory.
	readImported func(ctx context.Context, c *kube.Client, state P, resp *resource.ReadResponse)
	// unapplied gives the objects to delete for a state without an
	// inventory (imported, never applied); none deletes nothing.
	unapplied func(ctx context.Context, state P, diags *diag.Diagnostics) []inventoryEntry
	// keepCRDs says whether destroying state leaves the CRDs.
	keepCRDs func(state P) bool
}

// setInventory records entries as m's inventory and sets m as the whole of
// a state or a plan.
func setInventory[M any, P installable[M]](ctx context.Context, m P, entries []inventoryEntry, to interface {
	Set(context.Context, any) diag.Diagnostics
}, diags *diag.Diagnostics) {
	list, d := inventoryValue(entries)
	diags.Append(d...)
	m.installed().Inventory = list
	diags.Append(to.Set(ctx, m)...)
}

// replanned is the planned inventory when the inputs are the same as the
// state's: the state's objects, those a refresh found deleted or changed
// outside Terraform to be applied again.
func replanned(prior []inventoryEntry) []inventoryEntry {
	planned := slices.Clone(prior)
	for i := range planned {
		if planned[i].Drift != driftNone {
			planned[i].Digest, planned[i].Drift = "", driftNone
		}
	}
	return planned
}

func (l *installation[M, P]) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + l.typeSuffix
}

func (l *installation[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := shared.Deadline(ctx, P(&plan).installed().Timeouts, shared.OpCreate, defaultCreateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	entries, diags := l.apply(ctx, &plan, nil, nil)
	resp.Diagnostics.Append(diags...)
	if len(entries) == 0 {
		return // nothing was written: no state
	}
	// Even after a failure, record what was applied so that destroy (or
	// the replacement Terraform plans for a failed create) removes it.
	setInventory(ctx, P(&plan), entries, &resp.State, &resp.Diagnostics)
}

func (l *installation[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c, diags := l.Meta.Kube(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	entries, diags := P(&state).installed().inventory(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	if len(entries) == 0 {
		l.readImported(ctx, c, &state, resp)
		return
	}
	in := &installer{c: c, manager: l.Meta.FieldManager()}
	refreshed, diags := in.refresh(ctx, entries)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	if drift := driftSummary(refreshed); len(drift) > 0 {
		tflog.Warn(ctx, l.what+" objects changed outside Terraform", map[string]any{"objects": strings.Join(drift, "; ")})
	}
	setInventory(ctx, P(&state), refreshed, &resp.State, &resp.Diagnostics)
}

func (l *installation[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if inv := P(&plan).installed().Inventory; fullyKnown(inv) {
		// Only attributes of the resource itself (wait, timeouts,
		// keep_crds_on_destroy) changed: nothing to apply.
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	ctx, cancel, ok := shared.Deadline(ctx, P(&plan).installed().Timeouts, shared.OpUpdate, defaultUpdateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	prior, d := P(&state).installed().inventory(ctx)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	entries, diags := l.apply(ctx, &plan, &state, prior)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		if len(entries) > 0 {
			// Keep the old inputs, so the next plan retries the upgrade,
			// and every object either version may have left behind.
			setInventory(ctx, P(&state), mergeInventories(prior, entries), &resp.State, &resp.Diagnostics)
		}
		return
	}
	setInventory(ctx, P(&plan), entries, &resp.State, &resp.Diagnostics)
}

func (l *installation[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := shared.Deadline(ctx, P(&state).installed().Timeouts, shared.OpDelete, defaultDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	entries, d := P(&state).installed().inventory(ctx)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	if len(entries) == 0 {
		if entries = l.unapplied(ctx, &state, &resp.Diagnostics); len(entries) == 0 || resp.Diagnostics.HasError() {
			return
		}
	}
	c, diags := l.Meta.Kube(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	in := &installer{c: c, manager: l.Meta.FieldManager(), wait: true, keepCRDs: l.keepCRDs(&state)}
	resp.Diagnostics.Append(in.uninstall(ctx, entries)...)
}

// setImported sets the attributes an import ID gives.
func setImported(ctx context.Context, resp *resource.ImportStateResponse, attrs map[string]any) {
	for name, v := range attrs {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
}
