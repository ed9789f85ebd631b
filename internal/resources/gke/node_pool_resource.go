package gke

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

var (
	_ resource.Resource                   = (*nodePoolResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodePoolResource)(nil)
	_ resource.ResourceWithImportState    = (*nodePoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodePoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodePoolResource)(nil)
)

// NewNodePoolResource is registered in the provider.
func NewNodePoolResource() resource.Resource { return &nodePoolResource{} }

type nodePoolResource struct {
	meta *conn.Meta
}

// privateEtag is the private-state key of the etag GKE gave the pool when
// it was last read, sent with the first update so that an update planned
// against a pool that changed since is refused (ABORTED) instead of
// overwriting the change.
const privateEtag = "etag"

var (
	versionRE     = regexp.MustCompile(`^(latest|-|[0-9]+\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?)$`)
	machineTypeRE = regexp.MustCompile(`^[a-z][a-z0-9]*-[a-z0-9-]+$`)
	saRE          = regexp.MustCompile(`^(default|[a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z0-9.-]+\.iam\.gserviceaccount\.com|[0-9]+-compute@developer\.gserviceaccount\.com)$`)
)

func (r *nodePoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_gke_node_pool"
}

func (r *nodePoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A GKE Sandbox (gVisor) node pool for running untrusted code, hardened by default: nodes use the " +
			"GKE metadata server (pods never see the node's credentials), Shielded VMs with secure boot and integrity " +
			"monitoring, auto-repair and auto-upgrade. GKE adds the label and the `NoSchedule` taint " +
			"`sandbox.gke.io/runtime=gvisor` to the pool itself; pods with `runtimeClassName: gvisor` tolerate and " +
			"select them automatically. Those GKE-owned marks are not shown in `labels` and `taints` and never cause a " +
			"diff.\n\nA Standard cluster must keep at least one regular node pool for system workloads; GKE refuses a " +
			"gVisor pool as its only pool. Changes are made in place through the matching API call (`setSize`, " +
			"`setAutoscaling`, `setManagement`, `update`) wherever GKE allows it; only `project`, `location`, " +
			"`cluster`, `name`, `spot`, `service_account`, `oauth_scopes`, `shielded_instance_config` and " +
			"`sandbox_type` replace the pool. Mutations wait while another operation runs on the cluster (GKE runs " +
			"one at a time), within this resource's timeouts.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Full resource name, `projects/P/locations/L/clusters/C/nodePools/N`; also the import ID.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"project": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Project of the cluster. Defaults to the provider's `gke.project`. Changing it replaces " +
					"the pool.",
				Validators: []validator.String{projectID()},
			},
			"location": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Location of the cluster: its region (regional cluster) or zone (zonal cluster). Changing it replaces the pool.",
				Validators:          []validator.String{location()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"cluster": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the cluster (its short name, not its full resource name). Changing it replaces the pool.",
				Validators:          []validator.String{gkeName("cluster")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the node pool. Changing it replaces the pool.",
				Validators:          []validator.String{gkeName("node pool")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"node_count": schema.Int64Attribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Number of nodes per zone, for a pool without `autoscaling`; defaults to 1. Changed in " +
					"place (`setSize`). GKE's container API does not report a pool's current size, so this is the size " +
					"the provider last set: a resize made outside Terraform is not detected. Null while `autoscaling` " +
					"is set (the autoscaler owns the size then). Conflicts with `autoscaling`.",
				Validators: []validator.Int64{
					int64validator.AtLeast(0),
					int64validator.ConflictsWith(path.MatchRoot("autoscaling")),
				},
			},
			"autoscaling": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Let the cluster autoscaler size the pool within limits, either per zone " +
					"(`min_node_count`, `max_node_count`) or in total across zones (`total_min_node_count`, " +
					"`total_max_node_count`), not both. Changed in place (`setAutoscaling`); removing it turns the " +
					"autoscaler off and sets the pool to `node_count`. Conflicts with `node_count`.",
				Attributes: map[string]schema.Attribute{
					"min_node_count": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Minimum nodes per zone (0 or more). The pool starts at this size.",
						Validators:          []validator.Int64{int64validator.AtLeast(0)},
					},
					"max_node_count": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Maximum nodes per zone (1 to 1000).",
						Validators:          []validator.Int64{int64validator.Between(1, 1000)},
					},
					"total_min_node_count": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Minimum nodes across all zones.",
						Validators:          []validator.Int64{int64validator.AtLeast(0)},
					},
					"total_max_node_count": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Maximum nodes across all zones.",
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
					},
					"location_policy": schema.StringAttribute{
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString("BALANCED"),
						MarkdownDescription: "How new nodes are spread over zones: `BALANCED` (default) or `ANY` (where capacity is, e.g. for spot VMs).",
						Validators:          []validator.String{stringvalidator.OneOf("BALANCED", "ANY")},
					},
				},
			},
			"node_locations": schema.SetAttribute{
				Optional:    true,
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Zones of the cluster's region to put nodes in; defaults to the cluster's zones. Changed in " +
					"place (`update`, sent alone as GKE recommends).",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(zone()),
				},
				PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()},
			},
			"machine_type": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Compute Engine machine type of the nodes; GKE's default (`e2-medium`) when unset. Changed " +
					"in place: GKE recreates the nodes with the new type (surge upgrade).",
				Validators: []validator.String{stringCheck{desc: "a machine type such as e2-standard-4", check: func(s string) string {
					if !machineTypeRE.MatchString(s) {
						return fmt.Sprintf("%q is not a Compute Engine machine type such as e2-standard-4.", s)
					}
					return ""
				}}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"disk_size_gb": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Boot disk size in GB (at least 10); GKE's default (100) when unset. Changed in place (nodes are recreated).",
				Validators:          []validator.Int64{int64validator.AtLeast(10)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"disk_type": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Boot disk type; GKE's default (`pd-balanced`) when unset. Changed in place (nodes are recreated).",
				Validators:          []validator.String{stringvalidator.OneOf("pd-standard", "pd-balanced", "pd-ssd", "pd-extreme", "hyperdisk-balanced")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"spot": schema.BoolAttribute{
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
				MarkdownDescription: "Use Spot VMs (cheaper, can be reclaimed at any time). GKE cannot change it in place: changing it replaces the pool.",
				PlanModifiers:       []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			},
			"labels": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Kubernetes labels of the nodes, besides GKE's own `sandbox.gke.io/runtime=gvisor` (which " +
					"is not shown here and cannot be set). Changed in place.",
				Validators: []validator.Map{validators.Labels(), gkeOwnedKey{what: "label"}},
			},
			"taints": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "Extra Kubernetes taints of the nodes, besides GKE's own `sandbox.gke.io/runtime=gvisor:NoSchedule` " +
					"(which is not shown here; GKE refuses taints with that key). Changed in place.",
				Validators: []validator.List{listvalidator.SizeAtMost(50)},
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"key": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "Taint key, a qualified name such as `dedicated` or `example.com/team`.",
							Validators:          []validator.String{validators.QualifiedName(), gkeOwnedTaintKey()},
						},
						"value": schema.StringAttribute{
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString(""),
							MarkdownDescription: "Taint value (may be empty).",
							Validators:          []validator.String{validators.LabelValue()},
						},
						"effect": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "`NO_SCHEDULE`, `PREFER_NO_SCHEDULE` or `NO_EXECUTE` (GKE's spelling of NoSchedule, PreferNoSchedule, NoExecute).",
							Validators:          []validator.String{stringvalidator.OneOf("NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE")},
						},
					},
				},
			},
			"service_account": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Google service account of the nodes (email), or `default` (the Compute Engine default " +
					"account, GKE's default). A dedicated, minimally privileged account is recommended. GKE cannot " +
					"change it in place: changing it replaces the pool.",
				Validators: []validator.String{stringCheck{desc: "a service account email or default", check: func(s string) string {
					if !saRE.MatchString(s) {
						return fmt.Sprintf("%q is not a service account email (name@project.iam.gserviceaccount.com) or \"default\".", s)
					}
					return ""
				}}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()},
			},
			"oauth_scopes": schema.SetAttribute{
				Optional:    true,
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "OAuth scopes of the nodes' service account, as full URLs; GKE's defaults when unset. " +
					"GKE cannot change them in place: changing them replaces the pool.",
				Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.RegexMatches(
					regexp.MustCompile(`^https://www\.googleapis\.com/auth/[a-z.-]+$`),
					"must be a scope URL such as https://www.googleapis.com/auth/cloud-platform"))},
				PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown(), setplanmodifier.RequiresReplace()},
			},
			"workload_metadata_mode": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString("GKE_METADATA"),
				MarkdownDescription: "`GKE_METADATA` (default) serves pods the GKE metadata server, so untrusted code never sees " +
					"the node's service account credentials; it needs Workload Identity on the cluster. `GCE_METADATA` " +
					"exposes the node's metadata server to pods and should only be chosen knowingly. Changed in place.",
				Validators: []validator.String{stringvalidator.OneOf("GKE_METADATA", "GCE_METADATA")},
			},
			"shielded_instance_config": schema.SingleNestedAttribute{
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(shieldedAttrTypes, map[string]attr.Value{
					"enable_secure_boot": types.BoolValue(true), "enable_integrity_monitoring": types.BoolValue(true),
				})),
				MarkdownDescription: "Shielded VM options; both on by default. GKE cannot change them in place: changing them replaces the pool.",
				PlanModifiers:       []planmodifier.Object{objectplanmodifier.RequiresReplace()},
				Attributes: map[string]schema.Attribute{
					"enable_secure_boot": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Verify the boot chain of the nodes (default true).",
					},
					"enable_integrity_monitoring": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Monitor the nodes' boot integrity (default true).",
					},
				},
			},
			"management": schema.SingleNestedAttribute{
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(managementAttrTypes, map[string]attr.Value{
					"auto_repair": types.BoolValue(true), "auto_upgrade": types.BoolValue(true),
				})),
				MarkdownDescription: "Node auto-repair and auto-upgrade; both on by default. Changed in place (`setManagement`). " +
					"GKE refuses turning auto-upgrade off on a cluster enrolled in a release channel.",
				Attributes: map[string]schema.Attribute{
					"auto_repair": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Recreate unhealthy nodes (default true).",
					},
					"auto_upgrade": schema.BoolAttribute{
						Optional: true, Computed: true, Default: booldefault.StaticBool(true),
						MarkdownDescription: "Keep nodes on the cluster's version, including security patches (default true).",
					},
				},
			},
			"upgrade_settings": schema.SingleNestedAttribute{
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(upgradeAttrTypes, map[string]attr.Value{
					"max_surge": types.Int64Value(1), "max_unavailable": types.Int64Value(0),
				})),
				MarkdownDescription: "Surge upgrade settings, used whenever GKE recreates nodes (upgrades, machine type changes). Changed in place.",
				Attributes: map[string]schema.Attribute{
					"max_surge": schema.Int64Attribute{
						Optional: true, Computed: true, Default: int64default.StaticInt64(1),
						MarkdownDescription: "Extra nodes created during an upgrade (default 1).",
						Validators:          []validator.Int64{int64validator.AtLeast(0)},
					},
					"max_unavailable": schema.Int64Attribute{
						Optional: true, Computed: true, Default: int64default.StaticInt64(0),
						MarkdownDescription: "Nodes that may be unavailable at once during an upgrade (default 0).",
						Validators:          []validator.Int64{int64validator.AtLeast(0)},
					},
				},
			},
			"version": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Kubernetes version of the nodes: an exact GKE version, a prefix such as `1.35` (the newest " +
					"offered in that line), `latest`, or `-` (the control plane's version). Defaults to the control " +
					"plane's version. A prefix is kept as written while the pool's version matches it. Changed in " +
					"place (upgrades only). With `management.auto_upgrade`, leave it unset or use a prefix.",
				Validators: []validator.String{stringvalidator.RegexMatches(versionRE,
					"must be a GKE version such as 1.35.3-gke.1389000, a prefix such as 1.35, latest, or -")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"sandbox_type": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(sandboxGVisor),
				MarkdownDescription: "GKE Sandbox type; always `GVISOR` (the default). GKE cannot change it in place, so a pool " +
					"found without it (e.g. an imported regular pool) is replaced.",
				Validators:    []validator.String{stringvalidator.OneOf(sandboxGVisor)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"image_type": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(imageCOS),
				MarkdownDescription: "Node image; always `COS_CONTAINERD` (the default), the only image GKE Sandbox supports.",
				Validators:          []validator.String{imageTypeValidator{}},
			},
			"status": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "GKE's status of the pool: `RUNNING`, `RECONCILING`, `ERROR`, ...",
			},
			"instance_group_urls": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Managed instance groups of the pool, one per zone (Compute Engine API URLs).",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func (r *nodePoolResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	r.meta = meta
}

// ValidateConfig checks what spans several attributes; single attributes
// are checked by their validators. Everything here fails at plan, with the
// attribute path, before any request.
func (r *nodePoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m nodePoolModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(validateAutoscalingConfig(ctx, m.Autoscaling)...)
	resp.Diagnostics.Append(validateNodeLocations(m.Location, m.NodeLocations)...)
	var u upgradeSettingsModel
	if objectAs(ctx, m.UpgradeSettings, &u, &resp.Diagnostics) && knownInt(u.MaxSurge, 0) == 0 && knownInt(u.MaxUnavailable, 0) == 0 &&
		!u.MaxSurge.IsNull() && !u.MaxUnavailable.IsNull() && !u.MaxSurge.IsUnknown() && !u.MaxUnavailable.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("upgrade_settings"), "Upgrade could never make progress",
			"max_surge and max_unavailable are both 0: GKE could neither add a node nor take one down during an "+
				"upgrade, and refuses this. Set max_surge to at least 1 (the default).")
	}
}

func knownInt(v types.Int64, def int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueInt64()
}

// validateAutoscalingConfig enforces GKE's autoscaling rules at plan time.
func validateAutoscalingConfig(ctx context.Context, o types.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	var a autoscalingModel
	if !objectAs(ctx, o, &a, &diags) {
		return diags
	}
	p := path.Root("autoscaling")
	set := func(v types.Int64) bool { return !v.IsNull() }
	perZone := set(a.MinNodeCount) || set(a.MaxNodeCount)
	total := set(a.TotalMinNodeCount) || set(a.TotalMaxNodeCount)
	switch {
	case perZone && total:
		diags.AddAttributeError(p, "Per-zone and total limits mixed",
			"Autoscaling limits are either per zone (min_node_count, max_node_count) or across all zones "+
				"(total_min_node_count, total_max_node_count); GKE refuses both at once. Keep one pair.")
	case perZone && !set(a.MaxNodeCount):
		diags.AddAttributeError(p.AtName("max_node_count"), "Missing maximum",
			"min_node_count is set, so max_node_count is required: the autoscaler needs an upper bound.")
	case total && !set(a.TotalMaxNodeCount):
		diags.AddAttributeError(p.AtName("total_max_node_count"), "Missing maximum",
			"total_min_node_count is set, so total_max_node_count is required: the autoscaler needs an upper bound.")
	case !perZone && !total:
		diags.AddAttributeError(p, "No autoscaling limits",
			"Set max_node_count (and optionally min_node_count) per zone, or total_max_node_count (and optionally "+
				"total_min_node_count) across zones.")
	}
	if a.MinNodeCount.IsUnknown() || a.MaxNodeCount.IsUnknown() || a.TotalMinNodeCount.IsUnknown() || a.TotalMaxNodeCount.IsUnknown() {
		return diags
	}
	if set(a.MinNodeCount) && set(a.MaxNodeCount) && a.MinNodeCount.ValueInt64() > a.MaxNodeCount.ValueInt64() {
		diags.AddAttributeError(p.AtName("min_node_count"), "Minimum above maximum",
			fmt.Sprintf("min_node_count (%d) is greater than max_node_count (%d).", a.MinNodeCount.ValueInt64(), a.MaxNodeCount.ValueInt64()))
	}
	if set(a.TotalMinNodeCount) && set(a.TotalMaxNodeCount) && a.TotalMinNodeCount.ValueInt64() > a.TotalMaxNodeCount.ValueInt64() {
		diags.AddAttributeError(p.AtName("total_min_node_count"), "Minimum above maximum",
			fmt.Sprintf("total_min_node_count (%d) is greater than total_max_node_count (%d).",
				a.TotalMinNodeCount.ValueInt64(), a.TotalMaxNodeCount.ValueInt64()))
	}
	return diags
}

// validateNodeLocations checks that node locations are zones of the
// cluster's region.
func validateNodeLocations(loc types.String, zones types.Set) diag.Diagnostics {
	var diags diag.Diagnostics
	if loc.IsNull() || loc.IsUnknown() || zones.IsNull() || zones.IsUnknown() {
		return diags
	}
	region := regionOf(loc.ValueString())
	if region == "" {
		return diags // the location's own validator reports it
	}
	for _, e := range zones.Elements() {
		z, ok := e.(types.String)
		if !ok || z.IsNull() || z.IsUnknown() {
			continue
		}
		if m := zoneRE.FindStringSubmatch(z.ValueString()); m != nil && m[1] != region {
			diags.AddAttributeError(path.Root("node_locations").AtSetValue(z), "Zone outside the cluster's region",
				fmt.Sprintf("%q is not in region %s, where the cluster (location %q) is. Node locations must be zones "+
					"of the cluster's region, such as %s-a.", z.ValueString(), region, loc.ValueString(), region))
		}
	}
	return diags
}

// ModifyPlan fills what the schema cannot express: the project default
// from the provider (replacing the pool when it changes), the ID, the
// node_count default (1 without autoscaling, null with it), and computed
// values that stay stable when their inputs do.
func (r *nodePoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan, config nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	var state *nodePoolModel
	if !req.State.Raw.IsNull() {
		state = &nodePoolModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}

	if config.Project.IsNull() {
		switch {
		case r.meta != nil && r.meta.GKEProject() != "":
			plan.Project = types.StringValue(r.meta.GKEProject())
		case state != nil:
			plan.Project = state.Project
		default:
			resp.Diagnostics.AddAttributeError(path.Root("project"), "No GKE project",
				"Set this resource's project, or the provider's gke.project (or GOOGLE_PROJECT), so the provider "+
					"knows which project the cluster is in.")
			return
		}
	}
	if state != nil && !plan.Project.IsUnknown() && !plan.Project.Equal(state.Project) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("project"))
	}
	if !plan.Project.IsUnknown() && !plan.Location.IsUnknown() && !plan.Cluster.IsUnknown() && !plan.Name.IsUnknown() {
		plan.ID = types.StringValue(plan.poolName().String())
	}

	if config.NodeCount.IsNull() {
		switch {
		case config.Autoscaling.IsUnknown():
			plan.NodeCount = types.Int64Unknown()
		case config.Autoscaling.IsNull():
			plan.NodeCount = types.Int64Value(1)
		default:
			plan.NodeCount = types.Int64Null()
		}
	}

	if state != nil {
		// Instance groups follow the zones; they stay when the zones do.
		if plan.NodeLocations.Equal(state.NodeLocations) {
			plan.InstanceGroupURLs = state.InstanceGroupURLs
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *nodePoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultNodePoolTimeout)
	resp.Diagnostics.Append(diags...)
	project, diags := resolveProject(plan.Project, r.meta)
	resp.Diagnostics.Append(diags...)
	client, diags := gkeClient(ctx, r.meta)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plan.Project = types.StringValue(project)
	name := plan.poolName()

	np, diags := expandNodePool(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(ctx, "creating GKE node pool", map[string]any{"node_pool": name.String()})
	_, err := client.RunOperation(ctx, func() (*container.Operation, error) {
		return client.Service.Projects.Locations.Clusters.NodePools.Create(name.ClusterName.String(),
			&container.CreateNodePoolRequest{NodePool: np}).Context(ctx).Do()
	})
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsCreate, name.String()))
		// An operation that failed after GKE created the pool leaves it in
		// ERROR state. Record it, so Terraform marks it tainted and the
		// next apply replaces it rather than failing with "already exists".
		if got, gerr := client.Service.Projects.Locations.Clusters.NodePools.Get(name.String()).Context(ctx).Do(); gerr == nil {
			r.setState(ctx, got, &plan, &resp.State, resp.Private, &resp.Diagnostics)
		}
		return
	}
	got, err := client.Service.Projects.Locations.Clusters.NodePools.Get(name.String()).Context(ctx).Do()
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsGet, name.String()))
		return
	}
	r.setState(ctx, got, &plan, &resp.State, resp.Private, &resp.Diagnostics)
}

// stateSetter is what Create, Read and Update responses share.
type stateSetter interface {
	Set(context.Context, any) diag.Diagnostics
}

type privateSetter interface {
	SetKey(context.Context, string, []byte) diag.Diagnostics
}

// setState flattens GKE's pool over prior into the response state and keeps
// its etag in private state.
func (r *nodePoolResource) setState(ctx context.Context, np *container.NodePool, prior *nodePoolModel, st stateSetter, priv privateSetter, diags *diag.Diagnostics) {
	m, d := flattenNodePool(ctx, np, prior)
	diags.Append(d...)
	if d.HasError() {
		return
	}
	diags.Append(st.Set(ctx, &m)...)
	if priv != nil && np.Etag != "" {
		raw, _ := json.Marshal(np.Etag)
		diags.Append(priv.SetKey(ctx, privateEtag, raw)...)
	}
}

func (r *nodePoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	client, diags := gkeClient(ctx, r.meta)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.poolName()
	got, err := client.Service.Projects.Locations.Clusters.NodePools.Get(name.String()).Context(ctx).Do()
	if gkeapi.IsNotFound(err) {
		tflog.Warn(ctx, "GKE node pool is gone; removing it from state", map[string]any{"node_pool": name.String()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsGet, name.String()))
		return
	}
	if got.Config == nil || got.Config.SandboxConfig == nil || got.Config.SandboxConfig.Type != sandboxGVisor {
		resp.Diagnostics.AddAttributeWarning(path.Root("sandbox_type"), "Not a GKE Sandbox node pool",
			fmt.Sprintf("GKE reports node pool %s without sandbox_config.type GVISOR. This resource manages gVisor pools "+
				"only; the plan replaces the pool with a gVisor one. To keep a regular pool, manage it with another "+
				"resource and remove this one from state (terraform state rm).", name))
	}
	r.setState(ctx, got, &state, &resp.State, resp.Private, &resp.Diagnostics)
}

// Update applies each change through the API call GKE offers for it, one
// operation at a time (GKE runs one per cluster anyway), in this order:
// node pool updates (zones alone first, as the API recommends, then
// version, node shape, labels, taints, workload metadata, upgrade
// settings), then autoscaling and size, then management. The first update
// carries the etag read at plan time, so an update planned against a pool
// that changed since is refused rather than overwriting the change.
func (r *nodePoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultNodePoolTimeout)
	resp.Diagnostics.Append(diags...)
	client, diags := gkeClient(ctx, r.meta)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := plan.poolName().String()
	pools := client.Service.Projects.Locations.Clusters.NodePools

	etag := ""
	if raw, d := req.Private.GetKey(ctx, privateEtag); !d.HasError() && len(raw) > 0 {
		_ = json.Unmarshal(raw, &etag)
	}
	steps, diags := planNodePoolUpdates(ctx, &plan, &state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	sizeApplied := false
	for i, st := range steps {
		tflog.Info(ctx, "updating GKE node pool", map[string]any{"node_pool": name, "change": st.what, "step": i + 1, "of": len(steps)})
		var call func() (*container.Operation, error)
		switch {
		case st.update != nil:
			if etag != "" {
				st.update.Etag, etag = etag, ""
			}
			u := st.update
			call = func() (*container.Operation, error) { return pools.Update(name, u).Context(ctx).Do() }
		case st.size != nil:
			s := st.size
			call = func() (*container.Operation, error) { return pools.SetSize(name, s).Context(ctx).Do() }
		case st.autoscaling != nil:
			a := st.autoscaling
			call = func() (*container.Operation, error) { return pools.SetAutoscaling(name, a).Context(ctx).Do() }
		case st.management != nil:
			m := st.management
			call = func() (*container.Operation, error) { return pools.SetManagement(name, m).Context(ctx).Do() }
		}
		if _, err := client.RunOperation(ctx, call); err != nil {
			d := gkeapi.ErrorDiagnostic(err, st.method, name)
			resp.Diagnostics.AddError(d.Summary(), fmt.Sprintf("Changing %s (step %d of %d).\n%s", st.what, i+1, len(steps), d.Detail())+
				partialNote(i))
			r.recordPartialUpdate(ctx, client, name, &plan, &state, sizeApplied, resp)
			return
		}
		if st.size != nil {
			sizeApplied = true
		}
	}
	got, err := pools.Get(name).Context(ctx).Do()
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsGet, name))
		return
	}
	r.setState(ctx, got, &plan, &resp.State, resp.Private, &resp.Diagnostics)
}

func partialNote(done int) string {
	if done == 0 {
		return ""
	}
	return fmt.Sprintf("\n\nThe %d change(s) before this one were applied and are recorded in the state.", done)
}

// recordPartialUpdate stores what GKE now has after a failed update, so
// that changes applied before the failure are not planned again and the
// next plan shows only what is left.
func (r *nodePoolResource) recordPartialUpdate(ctx context.Context, client *gkeapi.Client, name string, plan, state *nodePoolModel,
	sizeApplied bool, resp *resource.UpdateResponse) {
	// The operation may have been cut short by the timeout; reading must
	// not be.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*defaultRequestBudget)
	defer cancel()
	got, err := client.Service.Projects.Locations.Clusters.NodePools.Get(name).Context(rctx).Do()
	if err != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		return
	}
	prior := *plan
	if !sizeApplied {
		prior.NodeCount = state.NodeCount
	}
	r.setState(ctx, got, &prior, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *nodePoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultNodePoolTimeout)
	resp.Diagnostics.Append(diags...)
	client, diags := gkeClient(ctx, r.meta)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := state.poolName().String()
	tflog.Info(ctx, "deleting GKE node pool", map[string]any{"node_pool": name})
	_, err := client.RunOperation(ctx, func() (*container.Operation, error) {
		return client.Service.Projects.Locations.Clusters.NodePools.Delete(name).Context(ctx).Do()
	})
	if err != nil && !gkeapi.IsNotFound(err) {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsDelete, name))
	}
}

// ImportState takes the pool's full resource name (also the zones/ form
// and API URLs, as gcloud and the console show them).
func (r *nodePoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	n, err := gkeapi.ParseNodePoolName(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("%v.\n\nImport a node pool by its full resource name, for example:\n\n"+
				"  terraform import agentsandbox_gke_node_pool.sandbox projects/my-project/locations/us-central1/clusters/my-cluster/nodePools/sandbox", err))
		return
	}
	for attrName, v := range map[string]string{
		"id": n.String(), "project": n.Project, "location": n.Location, "cluster": n.Cluster, "name": n.NodePool,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrName), v)...)
	}
}

// --- update planning ---

// updateStep is one API call of an update.
type updateStep struct {
	what        string // for logs and errors
	method      string // gkeapi.Method* constant
	update      *container.UpdateNodePoolRequest
	size        *container.SetNodePoolSizeRequest
	autoscaling *container.SetNodePoolAutoscalingRequest
	management  *container.SetNodePoolManagementRequest
}

// planNodePoolUpdates lists the calls that take the pool from state to plan.
func planNodePoolUpdates(ctx context.Context, plan, state *nodePoolModel) ([]updateStep, diag.Diagnostics) {
	var diags diag.Diagnostics
	var steps []updateStep
	upd := func(what string, req *container.UpdateNodePoolRequest) {
		steps = append(steps, updateStep{what: what, method: gkeapi.MethodNodePoolsUpdate, update: req})
	}
	known := func(v attr.Value) bool { return !v.IsUnknown() }

	if known(plan.NodeLocations) && !plan.NodeLocations.Equal(state.NodeLocations) {
		upd("node_locations", &container.UpdateNodePoolRequest{Locations: expandStrings(ctx, plan.NodeLocations, &diags)})
	}
	if known(plan.Version) && !plan.Version.IsNull() && !plan.Version.Equal(state.Version) && !alreadyAt(state.Version, plan.Version) {
		upd("version", &container.UpdateNodePoolRequest{NodeVersion: plan.Version.ValueString()})
	}
	if known(plan.ImageType) && !plan.ImageType.Equal(state.ImageType) {
		upd("image_type", &container.UpdateNodePoolRequest{ImageType: plan.ImageType.ValueString()})
	}
	shape := &container.UpdateNodePoolRequest{}
	var shapeFields []string
	if known(plan.MachineType) && !plan.MachineType.Equal(state.MachineType) {
		shape.MachineType = plan.MachineType.ValueString()
		shapeFields = append(shapeFields, "machine_type")
	}
	if known(plan.DiskSizeGB) && !plan.DiskSizeGB.Equal(state.DiskSizeGB) {
		shape.DiskSizeGb = plan.DiskSizeGB.ValueInt64()
		shapeFields = append(shapeFields, "disk_size_gb")
	}
	if known(plan.DiskType) && !plan.DiskType.Equal(state.DiskType) {
		shape.DiskType = plan.DiskType.ValueString()
		shapeFields = append(shapeFields, "disk_type")
	}
	if len(shapeFields) > 0 {
		upd(strings.Join(shapeFields, ", "), shape)
	}
	if !sameMap(plan.Labels, state.Labels) {
		upd("labels", &container.UpdateNodePoolRequest{Labels: &container.NodeLabels{Labels: expandLabels(ctx, plan.Labels, &diags)}})
	}
	if !sameList(plan.Taints, state.Taints) {
		upd("taints", &container.UpdateNodePoolRequest{Taints: &container.NodeTaints{Taints: expandTaints(ctx, plan.Taints, &diags)}})
	}
	if known(plan.WorkloadMetadataMode) && !plan.WorkloadMetadataMode.Equal(state.WorkloadMetadataMode) {
		upd("workload_metadata_mode", &container.UpdateNodePoolRequest{
			WorkloadMetadataConfig: &container.WorkloadMetadataConfig{Mode: plan.WorkloadMetadataMode.ValueString()},
		})
	}
	if known(plan.UpgradeSettings) && !plan.UpgradeSettings.Equal(state.UpgradeSettings) {
		upd("upgrade_settings", &container.UpdateNodePoolRequest{UpgradeSettings: expandUpgradeSettings(ctx, plan.UpgradeSettings, &diags)})
	}

	autoscalingChanged := !plan.Autoscaling.Equal(state.Autoscaling)
	if autoscalingChanged {
		a := expandAutoscaling(ctx, plan.Autoscaling, &diags)
		if a == nil {
			// Turning the autoscaler off; "enabled": false must be sent.
			a = &container.NodePoolAutoscaling{Enabled: false, ForceSendFields: []string{"Enabled"}}
		}
		steps = append(steps, updateStep{what: "autoscaling", method: gkeapi.MethodNodePoolsSetAutoscale,
			autoscaling: &container.SetNodePoolAutoscalingRequest{Autoscaling: a}})
	}
	if !plan.NodeCount.IsNull() && known(plan.NodeCount) && (!plan.NodeCount.Equal(state.NodeCount) || autoscalingChanged) {
		steps = append(steps, updateStep{what: "node_count", method: gkeapi.MethodNodePoolsSetSize,
			size: &container.SetNodePoolSizeRequest{NodeCount: plan.NodeCount.ValueInt64(), ForceSendFields: []string{"NodeCount"}}})
	}
	if known(plan.Management) && !plan.Management.Equal(state.Management) {
		steps = append(steps, updateStep{what: "management", method: gkeapi.MethodNodePoolsSetManage,
			management: &container.SetNodePoolManagementRequest{Management: expandManagement(ctx, plan.Management, &diags)}})
	}
	return steps, diags
}

// alreadyAt reports whether the state holds an exact version (as after an
// import) that a configured prefix already matches ("1.35.3-gke.1389000"
// and "1.35"): then only the state changes. Sending the prefix would make
// GKE "upgrade" the pool to the version it has, which recreates its nodes.
// When the state holds a prefix, a changed prefix is the user asking for an
// upgrade and is sent; "latest" and "-" depend on GKE's current offer and
// are always sent.
func alreadyAt(state, plan types.String) bool {
	have, want := state.ValueString(), plan.ValueString()
	return strings.Contains(have, "-gke.") && want != "latest" && want != "-" && versionMatches(have, want)
}

// sameMap treats null and empty as the same set of labels.
func sameMap(a, b types.Map) bool {
	if len(a.Elements()) == 0 && len(b.Elements()) == 0 {
		return true
	}
	return a.Equal(b)
}

func sameList(a, b types.List) bool {
	if len(a.Elements()) == 0 && len(b.Elements()) == 0 {
		return true
	}
	return a.Equal(b)
}

// --- validators specific to this resource ---

// gkeOwnedKey refuses GKE's own sandbox label key in a map.
type gkeOwnedKey struct{ what string }

func (v gkeOwnedKey) Description(context.Context) string {
	return fmt.Sprintf("the %s key %s is GKE's own and cannot be set", v.what, sandboxKey)
}
func (v gkeOwnedKey) MarkdownDescription(c context.Context) string { return v.Description(c) }

func (v gkeOwnedKey) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, ok := req.ConfigValue.Elements()[sandboxKey]; ok {
		resp.Diagnostics.AddAttributeError(req.Path.AtMapKey(sandboxKey), "GKE-owned "+v.what,
			fmt.Sprintf("GKE puts the %s %s=%s on every gVisor node pool itself, and the provider hides it. Remove it "+
				"from the configuration.", v.what, sandboxKey, sandboxValue))
	}
}

// gkeOwnedTaintKey refuses GKE's own sandbox taint key, which GKE refuses
// from users (a 400 during apply otherwise).
func gkeOwnedTaintKey() validator.String {
	return stringCheck{
		desc: "must not be " + sandboxKey + ", which GKE owns",
		check: func(s string) string {
			if s == sandboxKey {
				return fmt.Sprintf("The taint key %s is reserved: GKE adds the taint %s=%s:NoSchedule to every gVisor node "+
					"pool itself and refuses user taints with this key. Remove this taint; pods with runtimeClassName: "+
					"gvisor already tolerate GKE's.", sandboxKey, sandboxKey, sandboxValue)
			}
			return ""
		},
	}
}

// imageTypeValidator explains why only COS_CONTAINERD is allowed.
type imageTypeValidator struct{}

func (imageTypeValidator) Description(context.Context) string {
	return "must be COS_CONTAINERD, the only image GKE Sandbox supports"
}
func (v imageTypeValidator) MarkdownDescription(c context.Context) string { return v.Description(c) }

func (imageTypeValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || req.ConfigValue.ValueString() == imageCOS {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Unsupported image type for GKE Sandbox",
		fmt.Sprintf("image_type is %q, but GKE Sandbox (gVisor) node pools need %s; GKE refuses any other image. "+
			"Remove image_type or set it to %q.", req.ConfigValue.ValueString(), imageCOS, imageCOS))
}
