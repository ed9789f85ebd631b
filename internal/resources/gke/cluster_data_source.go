package gke

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// NewClusterDataSource is registered in the provider.
func NewClusterDataSource() datasource.DataSource {
	return object.NewQuery(&object.QueryFamily[clusterDataModel]{TypeSuffix: "_gke_cluster", Schema: clusterSchema, Read: readCluster})
}

type clusterDataModel struct {
	ID                  types.String `tfsdk:"id"`
	Project             types.String `tfsdk:"project"`
	Location            types.String `tfsdk:"location"`
	Name                types.String `tfsdk:"name"`
	Endpoint            types.String `tfsdk:"endpoint"`
	CACertificate       types.String `tfsdk:"ca_certificate"`
	Version             types.String `tfsdk:"version"`
	Status              types.String `tfsdk:"status"`
	Autopilot           types.Bool   `tfsdk:"autopilot"`
	ReleaseChannel      types.String `tfsdk:"release_channel"`
	WorkloadPool        types.String `tfsdk:"workload_pool"`
	AgentSandboxEnabled types.Bool   `tfsdk:"agent_sandbox_enabled"`
	NodePools           types.List   `tfsdk:"node_pools"`
}

// clusterPoolType is the type of an element of node_pools, derived from
// its schema attributes.
var clusterPoolType = tfvalues.ObjectType(clusterPoolAttributes)

func clusterSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Reads a GKE cluster through the container API: where its Kubernetes API is (endpoint and CA), " +
			"its version, its node pools with their sandbox type, and whether GKE's managed Agent Sandbox add-on is on. " +
			"Use it to check prerequisites (a gVisor pool exists, the add-on is off before installing the open-source " +
			"controller) or to wire another provider to the cluster.",
		Attributes: map[string]schema.Attribute{
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
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the cluster.",
				Validators:          []validator.String{validators.GKEName("cluster")},
			},
			"id":       computed("Full resource name, `projects/P/locations/L/clusters/C` (what the provider's `kubernetes.gke_cluster` takes)."),
			"endpoint": computed("Address of the cluster's Kubernetes API as GKE reports it (an IP address, without scheme)."),
			"ca_certificate": computed("The cluster CA certificate, PEM-encoded (GKE's `masterAuth.clusterCaCertificate`, " +
				"base64-decoded), ready for a Kubernetes client's CA setting."),
			"version":         computed("Control plane version, e.g. `1.35.3-gke.1389000`."),
			"status":          computed("GKE's status of the cluster: `RUNNING`, `RECONCILING`, ..."),
			"release_channel": computed("Release channel (`RAPID`, `REGULAR`, `STABLE`, `EXTENDED`), or empty when none."),
			"workload_pool": computed("Workload Identity pool (`PROJECT.svc.id.goog`), empty when Workload Identity is off " +
				"(then node pools cannot use `workload_metadata_mode = \"GKE_METADATA\"`)."),
			"autopilot": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether it is an Autopilot cluster (no user-managed node pools; gVisor through `runtimeClassName: gvisor`).",
			},
			"agent_sandbox_enabled": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether GKE's managed Agent Sandbox add-on is enabled.",
			},
			"node_pools": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The cluster's node pools, in GKE's order.",
				NestedObject: schema.NestedAttributeObject{
					Attributes: clusterPoolAttributes,
				},
			},
		},
	}
}

// readCluster reads the cluster the configuration names.
func readCluster(ctx context.Context, meta *conn.Meta, m *clusterDataModel) diag.Diagnostics {
	project, diags := resolveProject(m.Project, meta)
	client, d := gkeClient(ctx, meta)
	if diags.Append(d...); diags.HasError() {
		return diags
	}
	name := gkeapi.ClusterName{Project: project, Location: m.Location.ValueString(), Cluster: m.Name.ValueString()}.String()
	c, err := client.Service.Projects.Locations.Clusters.Get(name).Context(ctx).Do()
	if err != nil {
		return append(diags, gkeapi.ErrorDiagnostic(err, gkeapi.MethodClustersGet, name))
	}
	out, d := flattenCluster(ctx, c, project, m.Location.ValueString(), name)
	*m = out
	return append(diags, d...)
}

func flattenCluster(ctx context.Context, c *container.Cluster, project, location, name string) (clusterDataModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := clusterDataModel{
		ID:                  types.StringValue(name),
		Project:             types.StringValue(project),
		Location:            types.StringValue(location),
		Name:                types.StringValue(c.Name),
		Endpoint:            types.StringValue(c.Endpoint),
		Version:             types.StringValue(c.CurrentMasterVersion),
		Status:              types.StringValue(c.Status),
		Autopilot:           types.BoolValue(c.Autopilot != nil && c.Autopilot.Enabled),
		ReleaseChannel:      types.StringValue(""),
		WorkloadPool:        types.StringValue(""),
		AgentSandboxEnabled: types.BoolValue(gkeapi.AgentSandboxAddonEnabled(c)),
	}
	if c.ReleaseChannel != nil && c.ReleaseChannel.Channel != "UNSPECIFIED" {
		m.ReleaseChannel = types.StringValue(c.ReleaseChannel.Channel)
	}
	if c.WorkloadIdentityConfig != nil {
		m.WorkloadPool = types.StringValue(c.WorkloadIdentityConfig.WorkloadPool)
	}
	ca := ""
	if c.MasterAuth != nil {
		var ok bool
		if ca, ok = decodeCA(c.MasterAuth.ClusterCaCertificate); !ok {
			diags.AddAttributeWarning(path.Root("ca_certificate"), "Unexpected cluster CA encoding",
				"GKE's masterAuth.clusterCaCertificate is neither base64 of a PEM certificate nor PEM; it is passed on unchanged.")
		}
	}
	m.CACertificate = types.StringValue(ca)

	pools := make([]attr.Value, 0, len(c.NodePools))
	for _, np := range c.NodePools {
		cfg := orZero(np.Config)
		locs, d := types.ListValueFrom(ctx, types.StringType, tfvalues.NonNilSlice(np.Locations))
		diags.Append(d...)
		pools = append(pools, tfvalues.ObjectOf(clusterPoolType, map[string]attr.Value{
			"name":                types.StringValue(np.Name),
			"sandbox_type":        types.StringValue(orZero(cfg.SandboxConfig).Type),
			"image_type":          types.StringValue(cfg.ImageType),
			"machine_type":        types.StringValue(cfg.MachineType),
			"version":             types.StringValue(np.Version),
			"status":              types.StringValue(np.Status),
			"node_locations":      locs,
			"autoscaling_enabled": types.BoolValue(np.Autoscaling != nil && np.Autoscaling.Enabled),
		}, &diags))
	}
	list, d := types.ListValue(clusterPoolType, pools)
	diags.Append(d...)
	m.NodePools = list
	return m, diags
}

// decodeCA turns GKE's base64-of-PEM CA into PEM. A value that is already
// PEM is kept; anything else is returned as is with ok=false.
func decodeCA(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", true
	}
	if strings.HasPrefix(s, "-----BEGIN") {
		return s, true
	}
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil || !bytes.Contains(data, []byte("-----BEGIN CERTIFICATE-----")) {
		return s, false
	}
	return string(data), true
}

// computed is a computed string attribute of the data source.
func computed(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
}

// clusterPoolAttributes are the attributes of an element of node_pools,
// shared by the schema and the type of its values (derived from them).
var clusterPoolAttributes = map[string]schema.Attribute{
	"name":         computed("Node pool name."),
	"sandbox_type": computed("`GVISOR` for a GKE Sandbox pool, empty for a regular one."),
	"image_type":   computed("Node image, e.g. `COS_CONTAINERD`."),
	"machine_type": computed("Machine type of the nodes."),
	"version":      computed("Kubernetes version of the nodes."),
	"status":       computed("GKE's status of the pool."),
	"node_locations": schema.ListAttribute{
		Computed: true, ElementType: types.StringType,
		MarkdownDescription: "Zones of the pool's nodes.",
	},
	"autoscaling_enabled": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the autoscaler sizes the pool."},
}
