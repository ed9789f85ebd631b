package gke

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// ModifyPlan fills what the schema cannot express: the project default
// from the provider (replacing the pool when it changes), the ID, the
// node_count default (1 without autoscaling, null with it), and computed
// values that stay stable when their inputs do.
func (r *nodePoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, config, state, ok := planInputs(ctx, r.Meta, req, resp, func(m *nodePoolModel) *types.String { return &m.Project })
	if !ok {
		return // destroy, unreadable, or no project
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
		resp.Diagnostics.Append(defaultsThatChangeThePool(&config, &plan, state)...)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// defaultedAttribute is an attribute with a schema default (most of them a
// hardened one) that GKE may hold another value for on a pool this
// provider did not create.
type defaultedAttribute struct {
	name     string
	get      func(*nodePoolModel) attr.Value
	replaces bool // GKE cannot change it in place
}

var defaultedAttributes = []defaultedAttribute{
	{"sandbox_type", func(m *nodePoolModel) attr.Value { return m.SandboxType }, true},
	{"spot", func(m *nodePoolModel) attr.Value { return m.Spot }, true},
	{"shielded_instance_config", func(m *nodePoolModel) attr.Value { return m.ShieldedInstanceConfig }, true},
	{"image_type", func(m *nodePoolModel) attr.Value { return m.ImageType }, false},
	{"workload_metadata_mode", func(m *nodePoolModel) attr.Value { return m.WorkloadMetadataMode }, false},
	{"management", func(m *nodePoolModel) attr.Value { return m.Management }, false},
	{"upgrade_settings", func(m *nodePoolModel) attr.Value { return m.UpgradeSettings }, false},
}

// defaultsThatChangeThePool names each attribute the configuration leaves
// unset whose default differs from what GKE holds for the pool: the plan
// changes (or replaces) the pool only because of the provider's default.
// That is what importing a pool made by gcloud or the Google provider
// usually shows (GKE's own defaults are not this provider's hardened ones:
// secure boot off, for one), so the warning says which value GKE has, which
// the default is, and what to write to keep the pool as it is.
func defaultsThatChangeThePool(config, plan, state *nodePoolModel) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, a := range defaultedAttributes {
		cv, pv, sv := a.get(config), a.get(plan), a.get(state)
		if !cv.IsNull() || pv.IsUnknown() || sv.IsNull() || sv.IsUnknown() || pv.Equal(sv) {
			continue
		}
		effect := "The apply changes it in place."
		if a.replaces {
			effect = "GKE cannot change it in place: the plan REPLACES the pool (its nodes and the pods on them are deleted)."
		}
		keep := fmt.Sprintf("To keep the pool as it is, write %s = %s in the configuration; to take the default, apply.",
			a.name, hclValue(sv))
		if s, ok := sv.(types.String); ok && (s.ValueString() == "" || (a.name == "image_type" && s.ValueString() != imageCOS)) {
			// Not a value this resource accepts (Read warns about pools
			// without a sandbox type).
			keep = "This resource cannot keep that value: it manages GKE Sandbox pools with the settings its schema accepts."
		}
		diags.AddAttributeWarning(path.Root(a.name), "Node pool changed by a default",
			fmt.Sprintf("GKE holds %s = %s for node pool %s, and the configuration leaves %s unset, so the provider's "+
				"default %s applies. %s This is usual right after importing a pool created by gcloud, the console or "+
				"the Google provider, whose defaults differ. %s",
				a.name, hclValue(sv), plan.poolName(), a.name, hclValue(pv), effect, keep))
	}
	return diags
}

// hclValue writes a value as it would be written in a configuration.
func hclValue(v attr.Value) string {
	o, ok := v.(types.Object)
	if !ok {
		return v.String()
	}
	attrs := o.Attributes()
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+" = "+attrs[k].String())
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

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
	if !tfvalues.EqualOrBothEmpty(plan.Labels, state.Labels) {
		upd("labels", &container.UpdateNodePoolRequest{Labels: &container.NodeLabels{Labels: expandLabels(ctx, plan.Labels, &diags)}})
	}
	if !tfvalues.EqualOrBothEmpty(plan.Taints, state.Taints) {
		upd("taints", &container.UpdateNodePoolRequest{Taints: &container.NodeTaints{Taints: expandTaints(ctx, plan.Taints, &diags)}})
	}
	if known(plan.WorkloadMetadataMode) && !plan.WorkloadMetadataMode.Equal(state.WorkloadMetadataMode) {
		upd("workload_metadata_mode", &container.UpdateNodePoolRequest{
			WorkloadMetadataConfig: &container.WorkloadMetadataConfig{Mode: plan.WorkloadMetadataMode.ValueString()},
		})
	}
	if known(plan.UpgradeSettings) && !plan.UpgradeSettings.Equal(state.UpgradeSettings) {
		upd("upgrade_settings", &container.UpdateNodePoolRequest{UpgradeSettings: expandObject(ctx, plan.UpgradeSettings, &diags, expandUpgradeSettings)})
	}

	autoscalingChanged := !plan.Autoscaling.Equal(state.Autoscaling)
	if autoscalingChanged {
		a := expandObject(ctx, plan.Autoscaling, &diags, expandAutoscaling)
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
			management: &container.SetNodePoolManagementRequest{Management: expandObject(ctx, plan.Management, &diags, expandManagement)}})
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
