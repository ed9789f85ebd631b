package gke

import (
	"context"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// nodePoolModel is agentsandbox_gke_node_pool's state. Nested objects are
// kept as types.Object/List/Map so that null, empty and unknown stay
// distinct: GKE answers with empty where the user wrote nothing, and the
// state must repeat what the user wrote.
type nodePoolModel struct {
	ID                     types.String   `tfsdk:"id"`
	Project                types.String   `tfsdk:"project"`
	Location               types.String   `tfsdk:"location"`
	Cluster                types.String   `tfsdk:"cluster"`
	Name                   types.String   `tfsdk:"name"`
	NodeCount              types.Int64    `tfsdk:"node_count"`
	Autoscaling            types.Object   `tfsdk:"autoscaling"`
	NodeLocations          types.Set      `tfsdk:"node_locations"`
	MachineType            types.String   `tfsdk:"machine_type"`
	DiskSizeGB             types.Int64    `tfsdk:"disk_size_gb"`
	DiskType               types.String   `tfsdk:"disk_type"`
	Spot                   types.Bool     `tfsdk:"spot"`
	Labels                 types.Map      `tfsdk:"labels"`
	Taints                 types.List     `tfsdk:"taints"`
	ServiceAccount         types.String   `tfsdk:"service_account"`
	OauthScopes            types.Set      `tfsdk:"oauth_scopes"`
	WorkloadMetadataMode   types.String   `tfsdk:"workload_metadata_mode"`
	ShieldedInstanceConfig types.Object   `tfsdk:"shielded_instance_config"`
	Management             types.Object   `tfsdk:"management"`
	UpgradeSettings        types.Object   `tfsdk:"upgrade_settings"`
	Version                types.String   `tfsdk:"version"`
	SandboxType            types.String   `tfsdk:"sandbox_type"`
	ImageType              types.String   `tfsdk:"image_type"`
	Status                 types.String   `tfsdk:"status"`
	InstanceGroupURLs      types.List     `tfsdk:"instance_group_urls"`
	Timeouts               timeouts.Value `tfsdk:"timeouts"`
}

type autoscalingModel struct {
	MinNodeCount      types.Int64  `tfsdk:"min_node_count"`
	MaxNodeCount      types.Int64  `tfsdk:"max_node_count"`
	TotalMinNodeCount types.Int64  `tfsdk:"total_min_node_count"`
	TotalMaxNodeCount types.Int64  `tfsdk:"total_max_node_count"`
	LocationPolicy    types.String `tfsdk:"location_policy"`
}

type taintModel struct {
	Key    types.String `tfsdk:"key"`
	Value  types.String `tfsdk:"value"`
	Effect types.String `tfsdk:"effect"`
}

type managementModel struct {
	AutoRepair  types.Bool `tfsdk:"auto_repair"`
	AutoUpgrade types.Bool `tfsdk:"auto_upgrade"`
}

type shieldedModel struct {
	EnableSecureBoot          types.Bool `tfsdk:"enable_secure_boot"`
	EnableIntegrityMonitoring types.Bool `tfsdk:"enable_integrity_monitoring"`
}

type upgradeSettingsModel struct {
	MaxSurge       types.Int64 `tfsdk:"max_surge"`
	MaxUnavailable types.Int64 `tfsdk:"max_unavailable"`
}

// The types of the nested attributes' values, derived from the schema's
// attributes so that the two cannot disagree.
var (
	autoscalingType = tfvalues.ObjectType(autoscalingAttributes)
	taintType       = tfvalues.ObjectType(taintAttributes)
	managementType  = tfvalues.ObjectType(managementAttributes)
	shieldedType    = tfvalues.ObjectType(shieldedAttributes)
	upgradeType     = tfvalues.ObjectType(upgradeAttributes)
)

// poolName is the pool's full resource name; project must be resolved.
func (m *nodePoolModel) poolName() gkeapi.NodePoolName {
	return gkeapi.NodePoolName{
		ClusterName: gkeapi.ClusterName{Project: m.Project.ValueString(), Location: m.Location.ValueString(), Cluster: m.Cluster.ValueString()},
		NodePool:    m.Name.ValueString(),
	}
}

// --- expand: model → API ---

// expandNodePool builds the create request's node pool. Hardened defaults
// are in the schema (so they show in the plan), not here.
func expandNodePool(ctx context.Context, m *nodePoolModel) (*container.NodePool, diag.Diagnostics) {
	var diags diag.Diagnostics
	np := &container.NodePool{
		Name:    m.Name.ValueString(),
		Version: m.Version.ValueString(),
		Config: &container.NodeConfig{
			MachineType:    m.MachineType.ValueString(),
			DiskSizeGb:     m.DiskSizeGB.ValueInt64(),
			DiskType:       m.DiskType.ValueString(),
			ImageType:      m.ImageType.ValueString(),
			SandboxConfig:  &container.SandboxConfig{Type: m.SandboxType.ValueString()},
			Spot:           m.Spot.ValueBool(),
			ServiceAccount: m.ServiceAccount.ValueString(),
			Labels:         expandLabels(ctx, m.Labels, &diags),
			Taints:         expandTaints(ctx, m.Taints, &diags),
			OauthScopes:    expandStrings(ctx, m.OauthScopes, &diags),
			WorkloadMetadataConfig: &container.WorkloadMetadataConfig{
				Mode: m.WorkloadMetadataMode.ValueString(),
			},
			ShieldedInstanceConfig: expandObject(ctx, m.ShieldedInstanceConfig, &diags, expandShielded),
		},
		Locations:       expandStrings(ctx, m.NodeLocations, &diags),
		Management:      expandObject(ctx, m.Management, &diags, expandManagement),
		UpgradeSettings: expandObject(ctx, m.UpgradeSettings, &diags, expandUpgradeSettings),
	}
	if a := expandObject(ctx, m.Autoscaling, &diags, expandAutoscaling); a != nil {
		np.Autoscaling = a
		// The autoscaler starts the pool at its minimum; a total minimum is
		// spread by GKE itself.
		np.InitialNodeCount = a.MinNodeCount
	} else {
		np.InitialNodeCount = m.NodeCount.ValueInt64()
	}
	return np, diags
}

func expandStrings(ctx context.Context, v attr.Value, diags *diag.Diagnostics) []string {
	var out []string
	switch v := v.(type) {
	case types.Set:
		if v.IsNull() || v.IsUnknown() {
			return nil
		}
		diags.Append(v.ElementsAs(ctx, &out, false)...)
	case types.List:
		if v.IsNull() || v.IsUnknown() {
			return nil
		}
		diags.Append(v.ElementsAs(ctx, &out, false)...)
	}
	sort.Strings(out)
	return out
}

// expandLabels returns the user's labels; an empty (not nil) map for a null
// attribute, since an update sends "replace with these".
func expandLabels(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	return out
}

func expandTaints(ctx context.Context, l types.List, diags *diag.Diagnostics) []*container.NodeTaint {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var ts []taintModel
	diags.Append(l.ElementsAs(ctx, &ts, false)...)
	out := make([]*container.NodeTaint, 0, len(ts))
	for _, t := range ts {
		out = append(out, &container.NodeTaint{Key: t.Key.ValueString(), Value: t.Value.ValueString(), Effect: t.Effect.ValueString()})
	}
	return out
}

// expandObject expands a nested object attribute with expand; null or
// unknown is nil.
func expandObject[M, T any](ctx context.Context, o types.Object, diags *diag.Diagnostics, expand func(M) *T) *T {
	var m M
	if !tfvalues.ObjectAs(ctx, o, &m, diags) {
		return nil
	}
	return expand(m)
}

func expandAutoscaling(a autoscalingModel) *container.NodePoolAutoscaling {
	return &container.NodePoolAutoscaling{
		Enabled:           true,
		MinNodeCount:      a.MinNodeCount.ValueInt64(),
		MaxNodeCount:      a.MaxNodeCount.ValueInt64(),
		TotalMinNodeCount: a.TotalMinNodeCount.ValueInt64(),
		TotalMaxNodeCount: a.TotalMaxNodeCount.ValueInt64(),
		LocationPolicy:    a.LocationPolicy.ValueString(),
	}
}

// expandManagement always sends both flags: false must reach GKE, and the
// generated client drops false booleans unless forced.
func expandManagement(m managementModel) *container.NodeManagement {
	return &container.NodeManagement{
		AutoRepair:      m.AutoRepair.ValueBool(),
		AutoUpgrade:     m.AutoUpgrade.ValueBool(),
		ForceSendFields: []string{"AutoRepair", "AutoUpgrade"},
	}
}

func expandShielded(s shieldedModel) *container.ShieldedInstanceConfig {
	return &container.ShieldedInstanceConfig{
		EnableSecureBoot:          s.EnableSecureBoot.ValueBool(),
		EnableIntegrityMonitoring: s.EnableIntegrityMonitoring.ValueBool(),
		ForceSendFields:           []string{"EnableSecureBoot", "EnableIntegrityMonitoring"},
	}
}

func expandUpgradeSettings(u upgradeSettingsModel) *container.UpgradeSettings {
	return &container.UpgradeSettings{
		MaxSurge:        u.MaxSurge.ValueInt64(),
		MaxUnavailable:  u.MaxUnavailable.ValueInt64(),
		Strategy:        "SURGE",
		ForceSendFields: []string{"MaxSurge", "MaxUnavailable"},
	}
}

// --- flatten: API → model ---

// flattenNodePool turns GKE's node pool into state. prior is the plan or
// state the value replaces: it supplies what GKE does not report (the
// identity attributes, node_count, timeouts) and decides between null and
// empty where GKE cannot tell them apart.
func flattenNodePool(ctx context.Context, np *container.NodePool, prior *nodePoolModel) (nodePoolModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	cfg := orZero(np.Config)
	m := nodePoolModel{
		Project:        prior.Project,
		Location:       prior.Location,
		Cluster:        prior.Cluster,
		Name:           types.StringValue(np.Name),
		MachineType:    types.StringValue(cfg.MachineType),
		DiskSizeGB:     types.Int64Value(cfg.DiskSizeGb),
		DiskType:       types.StringValue(cfg.DiskType),
		Spot:           types.BoolValue(cfg.Spot),
		ServiceAccount: types.StringValue(cfg.ServiceAccount),
		ImageType:      types.StringValue(cfg.ImageType),
		Status:         types.StringValue(np.Status),
		Version:        types.StringValue(flattenVersion(np.Version, prior.Version)),
		Timeouts:       prior.Timeouts,
	}
	m.ID = types.StringValue(m.poolName().String())

	m.SandboxType = types.StringValue(orZero(cfg.SandboxConfig).Type)
	m.WorkloadMetadataMode = types.StringValue(orZero(cfg.WorkloadMetadataConfig).Mode)

	var d diag.Diagnostics
	m.NodeLocations, d = types.SetValueFrom(ctx, types.StringType, tfvalues.NonNilSlice(np.Locations))
	diags.Append(d...)
	m.OauthScopes, d = types.SetValueFrom(ctx, types.StringType, tfvalues.NonNilSlice(cfg.OauthScopes))
	diags.Append(d...)
	m.InstanceGroupURLs, d = types.ListValueFrom(ctx, types.StringType, tfvalues.NonNilSlice(np.InstanceGroupUrls))
	diags.Append(d...)

	m.Labels = flattenLabels(ctx, cfg.Labels, prior.Labels, &diags)
	m.Taints = flattenTaints(cfg.Taints, prior.Taints, &diags)
	m.Autoscaling = flattenAutoscaling(ctx, np.Autoscaling, prior.Autoscaling, &diags)

	mg := orZero(np.Management)
	m.Management = tfvalues.ObjectOf(managementType, map[string]attr.Value{
		"auto_repair": types.BoolValue(mg.AutoRepair), "auto_upgrade": types.BoolValue(mg.AutoUpgrade),
	}, &diags)
	sh := orZero(cfg.ShieldedInstanceConfig)
	m.ShieldedInstanceConfig = tfvalues.ObjectOf(shieldedType, map[string]attr.Value{
		"enable_secure_boot":          types.BoolValue(sh.EnableSecureBoot),
		"enable_integrity_monitoring": types.BoolValue(sh.EnableIntegrityMonitoring),
	}, &diags)
	us := orZero(np.UpgradeSettings)
	m.UpgradeSettings = tfvalues.ObjectOf(upgradeType, map[string]attr.Value{
		"max_surge": types.Int64Value(us.MaxSurge), "max_unavailable": types.Int64Value(us.MaxUnavailable),
	}, &diags)

	// node_count: the container API does not report a pool's size, so it
	// is what the provider last set (kept from prior), null while the
	// autoscaler owns the size, and GKE's initialNodeCount when nothing is
	// known yet (after an import).
	switch {
	case !m.Autoscaling.IsNull():
		m.NodeCount = types.Int64Null()
	case !prior.NodeCount.IsNull() && !prior.NodeCount.IsUnknown():
		m.NodeCount = prior.NodeCount
	default:
		m.NodeCount = types.Int64Value(np.InitialNodeCount)
	}
	return m, diags
}

// flattenVersion keeps a configured alias ("1.35", "1.35.3", "latest",
// "-") while the pool's actual version matches it, so that GKE resolving
// the alias, or patch upgrades within it, cause no diff.
func flattenVersion(actual string, prior types.String) string {
	if prior.IsNull() || prior.IsUnknown() {
		return actual
	}
	p := prior.ValueString()
	if versionMatches(actual, p) {
		return p
	}
	return actual
}

// versionMatches reports whether a GKE version satisfies a configured
// version or alias.
func versionMatches(actual, want string) bool {
	switch want {
	case "latest", "-":
		return true
	case "":
		return false
	}
	return actual == want || strings.HasPrefix(actual, want+".") || strings.HasPrefix(actual, want+"-")
}

// flattenLabels drops GKE's own sandbox label and keeps null vs empty as
// the prior had it.
func flattenLabels(ctx context.Context, labels map[string]string, prior types.Map, diags *diag.Diagnostics) types.Map {
	user := map[string]string{}
	for k, v := range labels {
		if k != sandboxKey {
			user[k] = v
		}
	}
	if len(user) == 0 && (prior.IsNull() || prior.IsUnknown()) {
		return types.MapNull(types.StringType)
	}
	out, d := types.MapValueFrom(ctx, types.StringType, user)
	diags.Append(d...)
	return out
}

// flattenTaints drops GKE's own sandbox taint, keeps GKE's order and null
// vs empty as the prior had it.
func flattenTaints(taints []*container.NodeTaint, prior types.List, diags *diag.Diagnostics) types.List {
	elemType := taintType
	var elems []attr.Value
	for _, t := range taints {
		if t == nil || t.Key == sandboxKey {
			continue
		}
		elems = append(elems, tfvalues.ObjectOf(taintType, map[string]attr.Value{
			"key": types.StringValue(t.Key), "value": types.StringValue(t.Value), "effect": types.StringValue(t.Effect),
		}, diags))
	}
	if len(elems) == 0 && (prior.IsNull() || prior.IsUnknown()) {
		return types.ListNull(elemType)
	}
	out, d := types.ListValue(elemType, elems)
	diags.Append(d...)
	return out
}

// flattenAutoscaling: null when the autoscaler is off. Limits of the mode
// not in use (per zone vs total) are 0 in GKE's answer and null in state
// unless the prior had them.
func flattenAutoscaling(ctx context.Context, a *container.NodePoolAutoscaling, prior types.Object, diags *diag.Diagnostics) types.Object {
	if a == nil || !a.Enabled {
		return types.ObjectNull(autoscalingType.AttrTypes)
	}
	var p autoscalingModel
	if !tfvalues.ObjectAs(ctx, prior, &p, diags) {
		p = autoscalingModel{
			MinNodeCount: types.Int64Null(), MaxNodeCount: types.Int64Null(),
			TotalMinNodeCount: types.Int64Null(), TotalMaxNodeCount: types.Int64Null(),
		}
		// Without a prior (import), the mode GKE reports decides.
		if a.TotalMaxNodeCount > 0 {
			p.TotalMinNodeCount, p.TotalMaxNodeCount = types.Int64Value(0), types.Int64Value(0)
		} else {
			p.MinNodeCount, p.MaxNodeCount = types.Int64Value(0), types.Int64Value(0)
		}
	}
	zeroAsNull := func(v int64, prior types.Int64) types.Int64 {
		if v == 0 && (prior.IsNull() || prior.IsUnknown()) {
			return types.Int64Null()
		}
		return types.Int64Value(v)
	}
	return tfvalues.ObjectOf(autoscalingType, map[string]attr.Value{
		"min_node_count":       zeroAsNull(a.MinNodeCount, p.MinNodeCount),
		"max_node_count":       zeroAsNull(a.MaxNodeCount, p.MaxNodeCount),
		"total_min_node_count": zeroAsNull(a.TotalMinNodeCount, p.TotalMinNodeCount),
		"total_max_node_count": zeroAsNull(a.TotalMaxNodeCount, p.TotalMaxNodeCount),
		"location_policy":      types.StringValue(a.LocationPolicy),
	}, diags)
}
