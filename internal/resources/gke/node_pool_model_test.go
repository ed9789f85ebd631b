package gke

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

var bg = context.Background()

func must(t *testing.T, diags diag.Diagnostics) {
	t.Helper()
	if diags.HasError() {
		t.Fatal(diags)
	}
}

func strSet(vals ...string) types.Set {
	elems := make([]attr.Value, len(vals))
	for i, v := range vals {
		elems[i] = types.StringValue(v)
	}
	return types.SetValueMust(types.StringType, elems)
}

func strMap(kv map[string]string) types.Map {
	elems := map[string]attr.Value{}
	for k, v := range kv {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

func taintList(ts ...[3]string) types.List {
	elems := make([]attr.Value, len(ts))
	for i, t := range ts {
		elems[i] = types.ObjectValueMust(taintType.AttrTypes, map[string]attr.Value{
			"key": types.StringValue(t[0]), "value": types.StringValue(t[1]), "effect": types.StringValue(t[2]),
		})
	}
	return types.ListValueMust(taintType, elems)
}

func autoscaling(lo, hi, tlo, thi *int64, policy string) types.Object {
	v := func(p *int64) attr.Value {
		if p == nil {
			return types.Int64Null()
		}
		return types.Int64Value(*p)
	}
	return types.ObjectValueMust(autoscalingType.AttrTypes, map[string]attr.Value{
		"min_node_count": v(lo), "max_node_count": v(hi), "total_min_node_count": v(tlo), "total_max_node_count": v(thi),
		"location_policy": types.StringValue(policy),
	})
}

func i64(v int64) *int64 { return &v }

func management(repair, upgrade bool) types.Object {
	return types.ObjectValueMust(managementType.AttrTypes, map[string]attr.Value{"auto_repair": types.BoolValue(repair), "auto_upgrade": types.BoolValue(upgrade)})
}

func shielded(boot, integrity bool) types.Object {
	return types.ObjectValueMust(shieldedType.AttrTypes, map[string]attr.Value{
		"enable_secure_boot": types.BoolValue(boot), "enable_integrity_monitoring": types.BoolValue(integrity),
	})
}

func upgrade(surge, unavailable int64) types.Object {
	return types.ObjectValueMust(upgradeType.AttrTypes, map[string]attr.Value{"max_surge": types.Int64Value(surge), "max_unavailable": types.Int64Value(unavailable)})
}

// planned is a node pool as planned with the schema's defaults.
func planned() nodePoolModel {
	return nodePoolModel{
		ID:                     types.StringValue("projects/p-123456/locations/us-central1/clusters/c/nodePools/sandbox"),
		Project:                types.StringValue("p-123456"),
		Location:               types.StringValue("us-central1"),
		Cluster:                types.StringValue("c"),
		Name:                   types.StringValue("sandbox"),
		NodeCount:              types.Int64Value(2),
		Autoscaling:            types.ObjectNull(autoscalingType.AttrTypes),
		NodeLocations:          strSet("us-central1-b", "us-central1-a"),
		MachineType:            types.StringValue("e2-standard-4"),
		DiskSizeGB:             types.Int64Value(50),
		DiskType:               types.StringValue("pd-ssd"),
		Spot:                   types.BoolValue(true),
		Labels:                 strMap(map[string]string{"team": "agents"}),
		Taints:                 taintList([3]string{"dedicated", "agents", "NO_SCHEDULE"}),
		ServiceAccount:         types.StringValue("nodes@p-123456.iam.gserviceaccount.com"),
		OauthScopes:            strSet("https://www.googleapis.com/auth/cloud-platform"),
		WorkloadMetadataMode:   types.StringValue("GKE_METADATA"),
		ShieldedInstanceConfig: shielded(true, true),
		Management:             management(false, true),
		UpgradeSettings:        upgrade(1, 0),
		Version:                types.StringValue("1.35"),
		SandboxType:            types.StringValue("GVISOR"),
		ImageType:              types.StringValue("COS_CONTAINERD"),
		Status:                 types.StringUnknown(),
		InstanceGroupURLs:      types.ListUnknown(types.StringType),
	}
}

func TestExpandNodePool(t *testing.T) {
	m := planned()
	np, diags := expandNodePool(bg, &m)
	must(t, diags)
	c := np.Config
	if np.Name != "sandbox" || np.InitialNodeCount != 2 || np.Version != "1.35" || np.Autoscaling != nil {
		t.Errorf("pool: %+v", np)
	}
	if c.SandboxConfig.Type != "GVISOR" || c.ImageType != "COS_CONTAINERD" || c.MachineType != "e2-standard-4" ||
		c.DiskSizeGb != 50 || c.DiskType != "pd-ssd" || !c.Spot || c.ServiceAccount != "nodes@p-123456.iam.gserviceaccount.com" {
		t.Errorf("config: %+v", c)
	}
	if c.WorkloadMetadataConfig.Mode != "GKE_METADATA" || !c.ShieldedInstanceConfig.EnableSecureBoot {
		t.Errorf("hardening: %+v %+v", c.WorkloadMetadataConfig, c.ShieldedInstanceConfig)
	}
	if strings.Join(np.Locations, ",") != "us-central1-a,us-central1-b" {
		t.Errorf("locations sorted: %v", np.Locations)
	}
	if c.Labels["team"] != "agents" || len(c.Taints) != 1 || c.Taints[0].Effect != "NO_SCHEDULE" {
		t.Errorf("labels %v taints %v", c.Labels, c.Taints)
	}
	// false must reach GKE: check the JSON the client sends.
	raw, _ := json.Marshal(np.Management)
	if string(raw) != `{"autoRepair":false,"autoUpgrade":true}` {
		t.Errorf("management JSON %s", raw)
	}
	raw, _ = json.Marshal(np.UpgradeSettings)
	if string(raw) != `{"maxSurge":"1","maxUnavailable":"0","strategy":"SURGE"}` && string(raw) != `{"maxSurge":1,"maxUnavailable":0,"strategy":"SURGE"}` {
		t.Errorf("upgrade settings JSON %s", raw)
	}

	m.NodeCount = types.Int64Null()
	m.Autoscaling = autoscaling(i64(1), i64(5), nil, nil, "ANY")
	np, diags = expandNodePool(bg, &m)
	must(t, diags)
	if a := np.Autoscaling; a == nil || !a.Enabled || a.MinNodeCount != 1 || a.MaxNodeCount != 5 || a.LocationPolicy != "ANY" || np.InitialNodeCount != 1 {
		t.Errorf("autoscaling %+v initial %d", np.Autoscaling, np.InitialNodeCount)
	}

	// Unknown optional-computed values are left for GKE to default.
	m = planned()
	m.MachineType, m.Version, m.NodeLocations = types.StringUnknown(), types.StringUnknown(), types.SetUnknown(types.StringType)
	np, diags = expandNodePool(bg, &m)
	must(t, diags)
	if np.Config.MachineType != "" || np.Version != "" || np.Locations != nil {
		t.Errorf("unknowns sent: %q %q %v", np.Config.MachineType, np.Version, np.Locations)
	}
}

// gkePool is what GKE answers for planned(): with GKE's own marks.
func gkePool() *container.NodePool {
	return &container.NodePool{
		Name:             "sandbox",
		InitialNodeCount: 2,
		Status:           "RUNNING",
		Version:          "1.35.3-gke.1389000",
		Locations:        []string{"us-central1-a", "us-central1-b"},
		InstanceGroupUrls: []string{
			"https://www.googleapis.com/compute/v1/projects/p-123456/zones/us-central1-a/instanceGroupManagers/gke-c-sandbox-1-grp",
			"https://www.googleapis.com/compute/v1/projects/p-123456/zones/us-central1-b/instanceGroupManagers/gke-c-sandbox-1-grp",
		},
		Config: &container.NodeConfig{
			MachineType: "e2-standard-4", DiskSizeGb: 50, DiskType: "pd-ssd", Spot: true, ImageType: "COS_CONTAINERD",
			ServiceAccount: "nodes@p-123456.iam.gserviceaccount.com",
			OauthScopes:    []string{"https://www.googleapis.com/auth/cloud-platform"},
			SandboxConfig:  &container.SandboxConfig{Type: "GVISOR"},
			Labels:         map[string]string{"team": "agents", sandboxKey: sandboxValue},
			Taints: []*container.NodeTaint{
				{Key: "dedicated", Value: "agents", Effect: "NO_SCHEDULE"},
				{Key: sandboxKey, Value: sandboxValue, Effect: "NO_SCHEDULE"},
			},
			WorkloadMetadataConfig: &container.WorkloadMetadataConfig{Mode: "GKE_METADATA"},
			ShieldedInstanceConfig: &container.ShieldedInstanceConfig{EnableSecureBoot: true, EnableIntegrityMonitoring: true},
		},
		Management:      &container.NodeManagement{AutoUpgrade: true},
		UpgradeSettings: &container.UpgradeSettings{MaxSurge: 1, Strategy: "SURGE"},
	}
}

// Flattening GKE's answer over the plan reproduces the plan: no diff,
// GKE's own label and taint hidden, the version alias kept.
func TestFlattenNodePoolRoundTrip(t *testing.T) {
	plan := planned()
	got, diags := flattenNodePool(bg, gkePool(), &plan)
	must(t, diags)
	want := plan
	want.Status = types.StringValue("RUNNING")
	want.InstanceGroupURLs = types.ListValueMust(types.StringType, []attr.Value{
		types.StringValue(gkePool().InstanceGroupUrls[0]), types.StringValue(gkePool().InstanceGroupUrls[1]),
	})
	for _, f := range []struct {
		name      string
		got, want attr.Value
	}{
		{"id", got.ID, want.ID}, {"node_count", got.NodeCount, want.NodeCount}, {"autoscaling", got.Autoscaling, want.Autoscaling},
		{"node_locations", got.NodeLocations, want.NodeLocations}, {"labels", got.Labels, want.Labels}, {"taints", got.Taints, want.Taints},
		{"oauth_scopes", got.OauthScopes, want.OauthScopes}, {"management", got.Management, want.Management},
		{"shielded", got.ShieldedInstanceConfig, want.ShieldedInstanceConfig}, {"upgrade", got.UpgradeSettings, want.UpgradeSettings},
		{"version", got.Version, want.Version}, {"sandbox_type", got.SandboxType, want.SandboxType}, {"status", got.Status, want.Status},
		{"instance_group_urls", got.InstanceGroupURLs, want.InstanceGroupURLs}, {"workload", got.WorkloadMetadataMode, want.WorkloadMetadataMode},
	} {
		if !f.got.Equal(f.want) {
			t.Errorf("%s = %s, want %s", f.name, f.got, f.want)
		}
	}
}

func TestFlattenLabelsAndTaintsNullVersusEmpty(t *testing.T) {
	np := gkePool()
	np.Config.Labels = map[string]string{sandboxKey: sandboxValue}
	np.Config.Taints = []*container.NodeTaint{{Key: sandboxKey, Value: sandboxValue, Effect: "NO_SCHEDULE"}}
	var diags diag.Diagnostics
	if l := flattenLabels(bg, np.Config.Labels, types.MapNull(types.StringType), &diags); !l.IsNull() {
		t.Errorf("labels with a null prior = %s, want null", l)
	}
	if l := flattenLabels(bg, np.Config.Labels, strMap(nil), &diags); l.IsNull() || len(l.Elements()) != 0 {
		t.Errorf("labels with an empty prior = %s, want {}", l)
	}
	if l := flattenTaints(np.Config.Taints, types.ListNull(taintType), &diags); !l.IsNull() {
		t.Errorf("taints with a null prior = %s, want null", l)
	}
	if l := flattenTaints(np.Config.Taints, taintList(), &diags); l.IsNull() || len(l.Elements()) != 0 {
		t.Errorf("taints with an empty prior = %s, want []", l)
	}
	// A label drifted in outside Terraform shows up even with a null prior.
	if l := flattenLabels(bg, map[string]string{"x": "y"}, types.MapNull(types.StringType), &diags); len(l.Elements()) != 1 {
		t.Errorf("drifted label hidden: %s", l)
	}
	must(t, diags)
}

func TestFlattenVersion(t *testing.T) {
	const actual = "1.35.3-gke.1389000"
	for _, tc := range []struct {
		prior types.String
		want  string
	}{
		{types.StringNull(), actual},
		{types.StringUnknown(), actual},
		{types.StringValue("1.35"), "1.35"},
		{types.StringValue("1.35.3"), "1.35.3"},
		{types.StringValue(actual), actual},
		{types.StringValue("latest"), "latest"},
		{types.StringValue("-"), "-"},
		{types.StringValue("1.3"), actual},  // not a prefix at a dot boundary
		{types.StringValue("1.34"), actual}, // upgraded past the alias: show it
		{types.StringValue("1.35.2-gke.1269000"), actual},
	} {
		if got := flattenVersion(actual, tc.prior); got != tc.want {
			t.Errorf("flattenVersion(%s) = %s, want %s", tc.prior, got, tc.want)
		}
	}
}

func TestFlattenAutoscalingAndNodeCount(t *testing.T) {
	np := gkePool()
	np.InitialNodeCount = 1
	np.Autoscaling = &container.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 4, LocationPolicy: "BALANCED"}

	// min_node_count unset in configuration: GKE's 0 stays null.
	prior := planned()
	prior.Autoscaling = autoscaling(nil, i64(4), nil, nil, "BALANCED")
	got, diags := flattenNodePool(bg, np, &prior)
	must(t, diags)
	if !got.Autoscaling.Equal(prior.Autoscaling) || !got.NodeCount.IsNull() {
		t.Errorf("autoscaling %s node_count %s", got.Autoscaling, got.NodeCount)
	}
	// min_node_count = 0 written explicitly stays 0.
	prior.Autoscaling = autoscaling(i64(0), i64(4), nil, nil, "BALANCED")
	got, _ = flattenNodePool(bg, np, &prior)
	if !got.Autoscaling.Equal(prior.Autoscaling) {
		t.Errorf("explicit 0: %s", got.Autoscaling)
	}
	// Import (no prior): GKE's mode decides; total limits.
	np.Autoscaling = &container.NodePoolAutoscaling{Enabled: true, TotalMaxNodeCount: 9, LocationPolicy: "ANY"}
	imported := nodePoolModel{Project: prior.Project, Location: prior.Location, Cluster: prior.Cluster,
		Autoscaling: types.ObjectNull(autoscalingType.AttrTypes), NodeCount: types.Int64Null(), Version: types.StringNull(),
		Labels: types.MapNull(types.StringType), Taints: types.ListNull(taintType)}
	got, _ = flattenNodePool(bg, np, &imported)
	if want := autoscaling(nil, nil, i64(0), i64(9), "ANY"); !got.Autoscaling.Equal(want) {
		t.Errorf("imported autoscaling %s, want %s", got.Autoscaling, want)
	}

	// Without autoscaling: node_count is what was set, or GKE's initial
	// count after an import.
	np.Autoscaling = nil
	got, _ = flattenNodePool(bg, np, &imported)
	if got.NodeCount.ValueInt64() != 1 || !got.Autoscaling.IsNull() {
		t.Errorf("imported node_count %s", got.NodeCount)
	}
	prior = planned()
	prior.NodeCount = types.Int64Value(7)
	got, _ = flattenNodePool(bg, np, &prior)
	if got.NodeCount.ValueInt64() != 7 {
		t.Errorf("node_count %s, want the size last set (7)", got.NodeCount)
	}
}

func stepKinds(steps []updateStep) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.what)
	}
	return strings.Join(out, "; ")
}

func TestPlanNodePoolUpdates(t *testing.T) {
	state := planned()
	state.Version = types.StringValue("1.35.3-gke.1389000")
	for _, tc := range []struct {
		name string
		edit func(*nodePoolModel)
		want string
	}{
		{"nothing", func(*nodePoolModel) {}, ""},
		{"size", func(m *nodePoolModel) { m.NodeCount = types.Int64Value(5) }, "node_count"},
		{"labels and taints", func(m *nodePoolModel) {
			m.Labels = types.MapNull(types.StringType)
			m.Taints = taintList([3]string{"dedicated", "other", "NO_EXECUTE"})
		}, "labels; taints"},
		{"node shape in one call", func(m *nodePoolModel) {
			m.MachineType = types.StringValue("n2-standard-8")
			m.DiskSizeGB = types.Int64Value(200)
		}, "machine_type, disk_size_gb"},
		{"zones first, management last", func(m *nodePoolModel) {
			m.Management = management(true, true)
			m.NodeLocations = strSet("us-central1-c")
			m.WorkloadMetadataMode = types.StringValue("GCE_METADATA")
		}, "node_locations; workload_metadata_mode; management"},
		{"autoscaling on", func(m *nodePoolModel) {
			m.NodeCount = types.Int64Null()
			m.Autoscaling = autoscaling(i64(1), i64(3), nil, nil, "BALANCED")
		}, "autoscaling"},
		{"version and upgrade settings", func(m *nodePoolModel) {
			m.Version = types.StringValue("1.36")
			m.UpgradeSettings = upgrade(3, 1)
		}, "version; upgrade_settings"},
		{"an alias the exact version already satisfies", func(m *nodePoolModel) {
			m.Version = types.StringValue("1.35.3")
		}, ""},
		{"latest is always sent", func(m *nodePoolModel) {
			m.Version = types.StringValue("latest")
		}, "version"},
		{"unknown computed values are not changes", func(m *nodePoolModel) {
			m.MachineType = types.StringUnknown()
			m.Status = types.StringUnknown()
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := state
			tc.edit(&plan)
			steps, diags := planNodePoolUpdates(bg, &plan, &state)
			must(t, diags)
			if got := stepKinds(steps); got != tc.want {
				t.Errorf("steps %q, want %q", got, tc.want)
			}
		})
	}

	// With a prefix in state, a changed prefix is an upgrade request.
	from := state
	from.Version = types.StringValue("1.35.2")
	to := state
	to.Version = types.StringValue("1.35")
	if steps, _ := planNodePoolUpdates(bg, &to, &from); stepKinds(steps) != "version" {
		t.Errorf("prefix 1.35.2 -> 1.35: steps %q", stepKinds(steps))
	}

	// Turning the autoscaler off sends enabled=false, then the size.
	from = state
	from.NodeCount = types.Int64Null()
	from.Autoscaling = autoscaling(i64(1), i64(3), nil, nil, "BALANCED")
	to = state
	to.NodeCount = types.Int64Value(1)
	steps, diags := planNodePoolUpdates(bg, &to, &from)
	must(t, diags)
	if stepKinds(steps) != "autoscaling; node_count" {
		t.Fatalf("steps %q", stepKinds(steps))
	}
	raw, _ := json.Marshal(steps[0].autoscaling)
	if !strings.Contains(string(raw), `"enabled":false`) {
		t.Errorf("disabling sends %s", raw)
	}
	raw, _ = json.Marshal(steps[1].size)
	if !strings.Contains(string(raw), `"nodeCount":1`) {
		t.Errorf("size sends %s", raw)
	}
	// Resizing to zero must send the zero.
	to.NodeCount = types.Int64Value(0)
	steps, _ = planNodePoolUpdates(bg, &to, &state)
	raw, _ = json.Marshal(steps[0].size)
	if !strings.Contains(string(raw), `"nodeCount":0`) {
		t.Errorf("size 0 sends %s", raw)
	}
	// Clearing labels sends an empty set, not nothing.
	to = state
	to.Labels = types.MapNull(types.StringType)
	steps, _ = planNodePoolUpdates(bg, &to, &state)
	raw, _ = json.Marshal(steps[0].update)
	if !strings.Contains(string(raw), `"labels":{}`) {
		t.Errorf("clearing labels sends %s", raw)
	}
}

func TestDecodeCA(t *testing.T) {
	const pemCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=", pemCA, true},
		{pemCA, strings.TrimSpace(pemCA), true},
		{"not base64!", "not base64!", false},
		{"aGVsbG8=", "aGVsbG8=", false}, // base64, but not a certificate
	} {
		got, ok := decodeCA(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("decodeCA(%.20q) = %.30q, %v; want %.30q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDerivedTypesFitTheModels: the object types derived from the schema's
// attributes read into, and convert back from, the models the code uses.
func TestDerivedTypesFitTheModels(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		typ   types.ObjectType
		model any
	}{
		"autoscaling":              {autoscalingType, &autoscalingModel{}},
		"taint":                    {taintType, &taintModel{}},
		"management":               {managementType, &managementModel{}},
		"shielded_instance_config": {shieldedType, &shieldedModel{}},
		"upgrade_settings":         {upgradeType, &upgradeSettingsModel{}},
	} {
		if err := tfvalues.CheckModel(ctx, c.typ, c.model); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
