package gke

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

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
	if tfvalues.ObjectAs(ctx, m.UpgradeSettings, &u, &resp.Diagnostics) && knownInt(u.MaxSurge, 0) == 0 && knownInt(u.MaxUnavailable, 0) == 0 &&
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
	if !tfvalues.ObjectAs(ctx, o, &a, &diags) {
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
	region := gkeapi.RegionOf(loc.ValueString())
	if region == "" {
		return diags // the location's own validator reports it
	}
	for _, e := range zones.Elements() {
		z, ok := e.(types.String)
		if !ok || z.IsNull() || z.IsUnknown() {
			continue
		}
		if zr := gkeapi.ZoneRegion(z.ValueString()); zr != "" && zr != region {
			diags.AddAttributeError(path.Root("node_locations").AtSetValue(z), "Zone outside the cluster's region",
				fmt.Sprintf("%q is not in region %s, where the cluster (location %q) is. Node locations must be zones "+
					"of the cluster's region, such as %s-a.", z.ValueString(), region, loc.ValueString(), region))
		}
	}
	return diags
}
