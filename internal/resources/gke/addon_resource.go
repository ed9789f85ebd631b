package gke

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

var (
	_ resource.Resource                = (*addonResource)(nil)
	_ resource.ResourceWithConfigure   = (*addonResource)(nil)
	_ resource.ResourceWithImportState = (*addonResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*addonResource)(nil)
)

// addonKind is one cluster feature that GKE switches on and off through
// AddonsConfig.<field>.enabled (Clusters.Update with desiredAddonsConfig).
// Each kind is its own resource, so that destroying one turns off only its
// own switch.
type addonKind struct {
	typeSuffix  string // after the provider's name: "_gke_addon"
	title       string // "Agent Sandbox add-on", for messages
	field       string // the AddonsConfig field, JSON spelling, for messages
	description string // the resource's MarkdownDescription
	enabled     func(*container.Cluster) bool
	// desired is the AddonsConfig that sets only this feature.
	desired func(enabled bool) *container.AddonsConfig
}

// agentSandboxAddon is GKE's managed Agent Sandbox add-on.
var agentSandboxAddon = addonKind{
	typeSuffix: "_gke_addon",
	title:      "Agent Sandbox add-on",
	field:      "agentSandboxConfig",
	description: "Enables GKE's managed Agent Sandbox add-on (`addonsConfig.agentSandboxConfig`) on an existing " +
		"cluster, waits for the cluster update, and disables it again on destroy. GKE then runs the agent-sandbox " +
		"controller and its CRDs for you.\n\nDo not combine it with `agentsandbox_controller` (the open-source " +
		"controller) in the same cluster: both would reconcile the same objects. GKE documents a minimum cluster " +
		"version for the add-on (1.35.2-gke.1269000 at the time of writing) and refuses older clusters. Enabling " +
		"an add-on that is already on adopts it (with a warning): destroying this resource then turns it off.",
	enabled: gkeapi.AgentSandboxAddonEnabled,
	desired: func(enabled bool) *container.AddonsConfig {
		return &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{
			Enabled: enabled,
			// false is omitted from JSON unless forced, and GKE would then
			// see an empty config instead of "disable".
			ForceSendFields: []string{"Enabled"},
		}}
	},
}

// podSnapshots is GKE Pod snapshots (AddonsConfig.podSnapshotConfig in the
// container/v1 discovery document, revision 20261027: "Configuration for
// the Pod Snapshot feature", a PodSnapshotConfig{enabled} of its own next
// to agentSandboxConfig). It is a resource of its own rather than an
// attribute of agentsandbox_gke_addon because the two are independent
// switches, and snapshots are documented for use with the open-source
// controller (agent-sandbox's snapshots guide,
// https://agent-sandbox.sigs.k8s.io/docs/sandbox/snapshots/, installs it),
// which must not share a cluster with the managed add-on: an attribute would
// tie snapshots to the add-on. Requirements are from "Prepare for Pod
// snapshots" and "Restore from a Pod snapshot"
// (https://docs.cloud.google.com/kubernetes-engine/docs/how-to/pod-snapshots-prepare,
// .../how-to/pod-snapshots).
var podSnapshots = addonKind{
	typeSuffix: "_gke_pod_snapshots",
	title:      "Pod snapshots feature",
	field:      "podSnapshotConfig",
	description: "Enables GKE Pod snapshots (`addonsConfig.podSnapshotConfig`) on an existing cluster, waits for the " +
		"cluster update, and disables them again on destroy. A Pod snapshot saves a running sandboxed Pod's whole " +
		"state, memory and root file system changes included, so it can be restored later, elsewhere or many times " +
		"(for agent-sandbox: suspend and resume that keep process memory, and fast starts from a warmed state).\n\n" +
		"What GKE's documentation says snapshots need, none of which this resource sets up: a cluster at version " +
		"1.34.1-gke.3084001 or later (GKE refuses older clusters), Workload Identity Federation for GKE, pods running " +
		"in GKE Sandbox (a gVisor node pool such as `agentsandbox_gke_node_pool` on Standard clusters), and a Cloud " +
		"Storage bucket with the Kubernetes-side snapshot configuration that the guides describe. The feature was in " +
		"Preview when this was written. It is independent of `agentsandbox_gke_addon` (each turns off only its own " +
		"switch): agent-sandbox's snapshots guide uses the open-source controller (`agentsandbox_controller`), which " +
		"must not share a cluster with the managed add-on. Enabling snapshots " +
		"that are already on adopts them (with a warning): destroying this resource then turns them off.",
	enabled: gkeapi.PodSnapshotsEnabled,
	desired: func(enabled bool) *container.AddonsConfig {
		return &container.AddonsConfig{PodSnapshotConfig: &container.PodSnapshotConfig{
			Enabled:         enabled,
			ForceSendFields: []string{"Enabled"},
		}}
	},
}

// NewAddonResource is registered in the provider: agentsandbox_gke_addon.
func NewAddonResource() resource.Resource { return &addonResource{kind: agentSandboxAddon} }

// NewPodSnapshotsResource is registered in the provider:
// agentsandbox_gke_pod_snapshots.
func NewPodSnapshotsResource() resource.Resource { return &addonResource{kind: podSnapshots} }

type addonResource struct {
	object.Configured
	kind addonKind
}

type addonModel struct {
	ID       types.String   `tfsdk:"id"`
	Project  types.String   `tfsdk:"project"`
	Location types.String   `tfsdk:"location"`
	Cluster  types.String   `tfsdk:"cluster"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (m *addonModel) clusterName() gkeapi.ClusterName {
	return gkeapi.ClusterName{Project: m.Project.ValueString(), Location: m.Location.ValueString(), Cluster: m.Cluster.ValueString()}
}

func (r *addonResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + r.kind.typeSuffix
}

func (r *addonResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: r.kind.description,
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The cluster's full resource name, `projects/P/locations/L/clusters/C`; also the import ID.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"project": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Project of the cluster. Defaults to the provider's `gke.project`.",
				Validators:          []validator.String{validators.GKEProjectID()},
			},
			"location": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Location (region or zone) of the cluster.",
				Validators:          []validator.String{validators.GKELocation()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"cluster": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the cluster.",
				Validators:          []validator.String{validators.GKEName("cluster")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

// ModifyPlan defaults the project from the provider (replacing when it
// changes) and plans the ID.
func (r *addonResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, _, _, ok := planInputs(ctx, r.Meta, req, resp, func(m *addonModel) *types.String { return &m.Project })
	if !ok {
		return // destroy, unreadable, or no project
	}
	if !plan.Project.IsUnknown() && !plan.Location.IsUnknown() && !plan.Cluster.IsUnknown() {
		plan.ID = types.StringValue(plan.clusterName().String())
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *addonResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan addonModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	project, diags := resolveProject(plan.Project, r.Meta)
	resp.Diagnostics.Append(diags...)
	ctx, cancel, client, ok := begin(ctx, r.Meta, plan.Timeouts, object.OpCreate, defaultAddonTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	plan.Project = types.StringValue(project)
	plan.ID = types.StringValue(plan.clusterName().String())
	name := plan.ID.ValueString()

	cluster, err := client.Service.Projects.Locations.Clusters.Get(name).Context(ctx).Do()
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodClustersGet, name))
		return
	}
	if r.kind.enabled(cluster) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("%s already enabled", upperFirst(r.kind.title)),
			fmt.Sprintf("The %s was already enabled on %s; this resource now manages it, and destroying it will "+
				"disable it.", r.kind.title, name))
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	if err := r.kind.set(ctx, client, name, true); err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodClustersUpdate, name))
		return
	}
	cluster, err = client.Service.Projects.Locations.Clusters.Get(name).Context(ctx).Do()
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodClustersGet, name))
		return
	}
	if !r.kind.enabled(cluster) {
		resp.Diagnostics.AddError(fmt.Sprintf("%s not enabled", upperFirst(r.kind.title)),
			fmt.Sprintf("Request: %s %s (desiredAddonsConfig.%s.enabled=true)\nGKE reported the operation "+
				"as done, but the cluster still shows the %s disabled.\n\nWhat to do: check the cluster in the "+
				"console (it may need a newer cluster version) and apply again.", gkeapi.MethodClustersUpdate, name,
				r.kind.field, r.kind.title))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// set turns the feature on or off through Clusters.Update with only its
// own field in desiredAddonsConfig, so that no other add-on is touched,
// and waits for the operation (riding out a busy cluster).
func (k addonKind) set(ctx context.Context, client *gkeapi.Client, name string, enabled bool) error {
	tflog.Info(ctx, "changing a GKE cluster feature", map[string]any{"cluster": name, "feature": k.field, "enabled": enabled})
	req := &container.UpdateClusterRequest{Update: &container.ClusterUpdate{DesiredAddonsConfig: k.desired(enabled)}}
	_, err := client.RunOperation(ctx, func() (*container.Operation, error) {
		return client.Service.Projects.Locations.Clusters.Update(name, req).Context(ctx).Do()
	})
	return err
}

func (r *addonResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state addonModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	client, diags := gkeClient(ctx, r.Meta)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.clusterName().String()
	cluster, err := client.Service.Projects.Locations.Clusters.Get(name).Context(ctx).Do()
	if gkeapi.IsNotFound(err) {
		tflog.Warn(ctx, "GKE cluster is gone; removing the add-on from state", map[string]any{"cluster": name})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodClustersGet, name))
		return
	}
	if !r.kind.enabled(cluster) {
		// Disabled outside Terraform: the next plan enables it again.
		tflog.Warn(ctx, "GKE cluster feature is disabled; removing it from state", map[string]any{"cluster": name, "feature": r.kind.field})
		resp.State.RemoveResource(ctx)
		return
	}
	state.ID = types.StringValue(name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update only records new timeouts: every other attribute replaces.
func (r *addonResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan addonModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *addonResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state addonModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, client, ok := begin(ctx, r.Meta, state.Timeouts, object.OpDelete, defaultAddonTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	name := state.clusterName().String()
	if err := r.kind.set(ctx, client, name, false); err != nil && !gkeapi.IsNotFound(err) {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodClustersUpdate, name))
	}
}

func (r *addonResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	n, err := gkeapi.ParseClusterName(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("%v.\n\nImport the %s by its cluster's full resource name, for example:\n\n"+
				"  terraform import agentsandbox%s.this projects/my-project/locations/us-central1/clusters/my-cluster",
				err, r.kind.title, r.kind.typeSuffix))
		return
	}
	for attrName, v := range map[string]string{"id": n.String(), "project": n.Project, "location": n.Location, "cluster": n.Cluster} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrName), v)...)
	}
}

// upperFirst capitalises a title for a diagnostic's summary.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
