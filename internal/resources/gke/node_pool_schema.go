package gke

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
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

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Patterns of GKE values the schema checks at plan time.
var (
	versionRE     = regexp.MustCompile(`^(latest|-|[0-9]+\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?)$`)
	machineTypeRE = regexp.MustCompile(`^[a-z][a-z0-9]*-[a-z0-9-]+$`)
	saRE          = regexp.MustCompile(`^(default|[a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z0-9.-]+\.iam\.gserviceaccount\.com|[0-9]+-compute@developer\.gserviceaccount\.com)$`)
)

func (r *nodePoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A GKE Sandbox node pool (gVisor, or MicroVM as far as GKE's published API describes it) for " +
			"running untrusted code, hardened by default: nodes use the " +
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
				Validators: []validator.String{validators.GKEProjectID()},
			},
			"location": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Location of the cluster: its region (regional cluster) or zone (zonal cluster). Changing it replaces the pool.",
				Validators:          []validator.String{validators.GKELocation()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"cluster": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the cluster (its short name, not its full resource name). Changing it replaces the pool.",
				Validators:          []validator.String{validators.GKEName("cluster")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the node pool. Changing it replaces the pool.",
				Validators:          []validator.String{validators.GKEName("node pool")},
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
				Attributes: autoscalingAttributes,
			},
			"node_locations": schema.SetAttribute{
				Optional:    true,
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Zones of the cluster's region to put nodes in; defaults to the cluster's zones. Changed in " +
					"place (`update`, sent alone as GKE recommends).",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(validators.GKEZone()),
				},
				PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()},
			},
			"machine_type": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Compute Engine machine type of the nodes; GKE's default (`e2-medium`) when unset. Changed " +
					"in place: GKE recreates the nodes with the new type (surge upgrade).",
				Validators: []validator.String{validators.Check{Desc: "a machine type such as e2-standard-4", Problem: func(s string) string {
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
				Validators: []validator.Map{validators.Labels(), validators.GKEOwnedMapKey("label", sandboxKey, sandboxValue)},
			},
			"taints": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "Extra Kubernetes taints of the nodes, besides GKE's own `sandbox.gke.io/runtime=gvisor:NoSchedule` " +
					"(which is not shown here; GKE refuses taints with that key). Changed in place.",
				Validators: []validator.List{listvalidator.SizeAtMost(50)},
				NestedObject: schema.NestedAttributeObject{
					Attributes: taintAttributes,
				},
			},
			"service_account": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Google service account of the nodes (email), or `default` (the Compute Engine default " +
					"account, GKE's default). A dedicated, minimally privileged account is recommended. GKE cannot " +
					"change it in place: changing it replaces the pool.",
				Validators: []validator.String{validators.Check{Desc: "a service account email or default", Problem: func(s string) string {
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
				Default: objectdefault.StaticValue(types.ObjectValueMust(shieldedType.AttrTypes, map[string]attr.Value{
					"enable_secure_boot": types.BoolValue(true), "enable_integrity_monitoring": types.BoolValue(true),
				})),
				MarkdownDescription: "Shielded VM options; both on by default. GKE cannot change them in place: changing them replaces the pool.",
				PlanModifiers:       []planmodifier.Object{objectplanmodifier.RequiresReplace()},
				Attributes:          shieldedAttributes,
			},
			"management": schema.SingleNestedAttribute{
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(managementType.AttrTypes, map[string]attr.Value{
					"auto_repair": types.BoolValue(true), "auto_upgrade": types.BoolValue(true),
				})),
				MarkdownDescription: "Node auto-repair and auto-upgrade; both on by default. Changed in place (`setManagement`). " +
					"GKE refuses turning auto-upgrade off on a cluster enrolled in a release channel.",
				Attributes: managementAttributes,
			},
			"upgrade_settings": schema.SingleNestedAttribute{
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(upgradeType.AttrTypes, map[string]attr.Value{
					"max_surge": types.Int64Value(1), "max_unavailable": types.Int64Value(0),
				})),
				MarkdownDescription: "Surge upgrade settings, used whenever GKE recreates nodes (upgrades, machine type changes). Changed in place.",
				Attributes:          upgradeAttributes,
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
				MarkdownDescription: "GKE Sandbox type: `GVISOR` (the default) or `MICROVM`. GKE cannot change it in place, so " +
					"changing it, or a pool found without one (e.g. an imported regular pool), replaces the pool.\n\n" +
					"`MICROVM` is in GKE's published container API (`SandboxConfig.type`, \"Run sandbox using MicroVM\") but " +
					"no public GKE documentation reachable when this provider was written says what a MicroVM pool needs " +
					"or gets: which node image (the provider keeps `COS_CONTAINERD` rather than guess), which label and " +
					"taint GKE adds (none is assumed; the `sandbox.gke.io/runtime` key stays reserved and hidden as for " +
					"gVisor), or which RuntimeClass its pods use. The provider sends the type and shows GKE's answer; " +
					"sandbox templates and the isolation report recognise only gVisor as an isolating runtime by itself, so " +
					"a template aimed at a MicroVM pool still warns, and the report flags its pods unless you name their " +
					"RuntimeClass, once verified, in `agentsandbox_isolation_report`'s `isolating_runtime_classes`. Tested " +
					"against the GKE emulator only.",
				Validators:    []validator.String{stringvalidator.OneOf(sandboxGVisor, sandboxMicroVM)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"image_type": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(imageCOS),
				MarkdownDescription: "Node image; always `COS_CONTAINERD` (the default), the only image GKE documents for GKE " +
					"Sandbox (gVisor). No image is documented for MicroVM pools, so none other is accepted for them either.",
				Validators: []validator.String{validators.GKEImageType(imageCOS)},
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

// autoscalingAttributes are the attributes of autoscaling, shared by the schema and
// the type of its values (derived from them).
var autoscalingAttributes = map[string]schema.Attribute{
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
}

// taintAttributes are the attributes of taints, shared by the schema and
// the type of its values (derived from them).
var taintAttributes = map[string]schema.Attribute{
	"key": schema.StringAttribute{
		Required:            true,
		MarkdownDescription: "Taint key, a qualified name such as `dedicated` or `example.com/team`.",
		Validators:          []validator.String{validators.QualifiedName(), validators.GKEOwnedTaintKey(sandboxKey, sandboxValue)},
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
}

// shieldedAttributes are the attributes of shielded_instance_config, shared by the schema and
// the type of its values (derived from them).
var shieldedAttributes = map[string]schema.Attribute{
	"enable_secure_boot": schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(true),
		MarkdownDescription: "Verify the boot chain of the nodes (default true).",
	},
	"enable_integrity_monitoring": schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(true),
		MarkdownDescription: "Monitor the nodes' boot integrity (default true).",
	},
}

// managementAttributes are the attributes of management, shared by the schema and
// the type of its values (derived from them).
var managementAttributes = map[string]schema.Attribute{
	"auto_repair": schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(true),
		MarkdownDescription: "Recreate unhealthy nodes (default true).",
	},
	"auto_upgrade": schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(true),
		MarkdownDescription: "Keep nodes on the cluster's version, including security patches (default true).",
	},
}

// upgradeAttributes are the attributes of upgrade_settings, shared by the schema and
// the type of its values (derived from them).
var upgradeAttributes = map[string]schema.Attribute{
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
}
