// Package cluster implements data.agentsandbox_cluster: what a cluster offers
// for running sandboxes (server version, served agent-sandbox API versions,
// the gVisor RuntimeClass), so modules can check prerequisites or branch on
// them before creating anything.
package cluster

import (
	"context"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// NewDataSource is registered in the provider.
func NewDataSource() datasource.DataSource {
	return object.NewQuery(&object.QueryFamily[clusterModel]{TypeSuffix: "_cluster", Schema: dataSourceSchema, Read: read})
}

type clusterModel struct {
	RuntimeClassName   types.String `tfsdk:"runtime_class_name"`
	Host               types.String `tfsdk:"host"`
	ServerVersion      types.String `tfsdk:"server_version"`
	SandboxAPIVersions types.List   `tfsdk:"sandbox_api_versions"`
	RuntimeClassExists types.Bool   `tfsdk:"gvisor_runtime_class"`
	RuntimeHandler     types.String `tfsdk:"runtime_handler"`
}

var runtimeClassGVR = k8sschema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}

func dataSourceSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "What the configured cluster offers for running sandboxes: its version, which " +
			"agent-sandbox API versions it serves (empty until the CRDs are installed, e.g. by " +
			"`agentsandbox_controller`), and whether the gVisor RuntimeClass exists. Reads live state on every plan.",
		Attributes: map[string]schema.Attribute{
			"runtime_class_name": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "RuntimeClass to look for. Defaults to `gvisor`, the name GKE and the hardened templates use.",
				Validators:          []validator.String{stringvalidator.LengthBetween(1, 253)},
			},
			"host": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Address of the API server the provider is connected to.",
			},
			"server_version": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The API server's version, e.g. `v1.37.2` (GKE adds a suffix such as `-gke.1000`).",
			},
			"sandbox_api_versions": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Served group versions of the agent-sandbox API, sorted, e.g. " +
					"`[\"agents.x-k8s.io/v1beta1\", \"extensions.agents.x-k8s.io/v1beta1\"]`. Empty when the CRDs are not installed.",
			},
			"gvisor_runtime_class": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether the RuntimeClass named by `runtime_class_name` exists.",
			},
			"runtime_handler": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Handler of that RuntimeClass (`runsc` for gVisor), or empty when it does not exist.",
			},
		},
	}
}

// read fills in what the cluster offers.
func read(ctx context.Context, meta *conn.Meta, m *clusterModel) diag.Diagnostics {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return diags
	}
	cs, err := c.Clientset()
	if err != nil {
		diags.AddError("Cannot build the Kubernetes client", err.Error())
		return diags
	}

	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return append(diags, kube.Diagnostics(err, "get", kube.ObjectRef{Kind: "server version", Name: "/version"})...)
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		return append(diags, kube.Diagnostics(err, "list", kube.ObjectRef{Kind: "API groups"})...)
	}
	versions := servedSandboxVersions(groups)

	rcName := m.RuntimeClassName.ValueString()
	if rcName == "" {
		rcName = "gvisor"
	}
	handler := ""
	rc, err := c.Get(ctx, runtimeClassGVR, "", rcName)
	switch {
	case err == nil:
		handler, _ = rc.Object["handler"].(string)
	case kube.IsNotFound(err):
	default:
		return append(diags, kube.Diagnostics(err, "get", kube.ObjectRef{GVR: runtimeClassGVR, Kind: "RuntimeClass", Name: rcName})...)
	}

	list, d := types.ListValueFrom(ctx, types.StringType, versions)
	diags.Append(d...)
	m.Host = types.StringValue(c.RESTConfig().Host)
	m.ServerVersion = types.StringValue(v.GitVersion)
	m.SandboxAPIVersions = list
	m.RuntimeClassExists = types.BoolValue(err == nil)
	m.RuntimeHandler = types.StringValue(handler)
	return diags
}

// servedSandboxVersions lists, sorted, the group versions of the two
// agent-sandbox API groups that the server serves.
func servedSandboxVersions(groups *metav1.APIGroupList) []string {
	out := []string{}
	if groups == nil {
		return out
	}
	for _, g := range groups.Groups {
		if g.Name != agentsv1beta1.GroupVersion.Group && g.Name != extv1beta1.GroupVersion.Group {
			continue
		}
		for _, v := range g.Versions {
			out = append(out, v.GroupVersion)
		}
	}
	sort.Strings(out)
	return out
}
