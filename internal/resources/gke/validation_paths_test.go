package gke_test

import (
	"encoding/json"
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

const nodePoolType = "agentsandbox_gke_node_pool"

// TestNodePoolValidationPaths sends bad configurations to the provider as
// Terraform does (ValidateResourceConfig over protocol 6) and checks that
// each error carries the exact attribute path, including paths inside
// nested attributes, which the CLI cannot show. No TF_ACC needed: nothing
// leaves the process.
func TestNodePoolValidationPaths(t *testing.T) {
	server := pt.New(t, provider.New("test"))
	// config decodes a configuration written as JSON, as in the protocol.
	config := func(t *testing.T, body string) map[string]any {
		var cfg map[string]any
		if err := json.Unmarshal([]byte(body), &cfg); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return cfg
	}
	const base = `"location": "us-central1", "cluster": "emu-cluster", "name": "sandbox"`
	var cases []pt.BadInput
	for _, tc := range []struct {
		name   string
		json   string // attributes besides the base ones
		path   string
		detail string
	}{
		{"wrong image type", `"image_type": "UBUNTU_CONTAINERD"`, "image_type", "need COS_CONTAINERD"},
		{"reserved taint key", `"taints": [{"key": "a", "effect": "NO_SCHEDULE"}, {"key": "sandbox.gke.io/runtime", "value": "gvisor", "effect": "NO_SCHEDULE"}]`,
			"taints[1].key", "is reserved"},
		{"reserved label key", `"labels": {"team": "x", "sandbox.gke.io/runtime": "gvisor"}`, `labels["sandbox.gke.io/runtime"]`, "GKE puts the label"},
		{"min above max", `"autoscaling": {"min_node_count": 5, "max_node_count": 2}`, "autoscaling.min_node_count", "greater than max_node_count"},
		{"per-zone and total", `"autoscaling": {"max_node_count": 2, "total_max_node_count": 6}`, "autoscaling", "either per zone"},
		{"min without max", `"autoscaling": {"min_node_count": 1}`, "autoscaling.max_node_count", "max_node_count is required"},
		{"no limits", `"autoscaling": {}`, "autoscaling", "Set max_node_count"},
		{"node_count and autoscaling", `"node_count": 2, "autoscaling": {"max_node_count": 3}`, "node_count", "autoscaling"},
		{"bad location", `"location": "us-central"`, "location", "neither a region"},
		{"zone outside the region", `"node_locations": ["us-central1-a", "europe-west1-b"]`, `node_locations["europe-west1-b"]`, "not in region us-central1"},
		{"region as node location", `"node_locations": ["us-central1"]`, `node_locations["us-central1"]`, "is not a zone"},
		{"bad taint effect", `"taints": [{"key": "a", "effect": "NoSchedule"}]`, "taints[0].effect", "must be one of"},
		{"bad taint key", `"taints": [{"key": "a b", "effect": "NO_SCHEDULE"}]`, "taints[0].key", "qualified name"},
		{"bad label value", `"labels": {"team": "not ok!"}`, `labels["team"]`, "label value"},
		{"upgrade cannot progress", `"upgrade_settings": {"max_surge": 0, "max_unavailable": 0}`, "upgrade_settings", "both 0"},
		{"negative surge", `"upgrade_settings": {"max_surge": -1, "max_unavailable": 0}`, "upgrade_settings.max_surge", "at least 0"},
		{"bad version", `"version": "v1.35"`, "version", "must be a GKE version"},
		{"disk too small", `"disk_size_gb": 5`, "disk_size_gb", "at least 10"},
		{"bad disk type", `"disk_type": "ssd"`, "disk_type", "must be one of"},
		{"bad machine type", `"machine_type": "E2 standard"`, "machine_type", "not a Compute Engine machine type"},
		{"bad sandbox type", `"sandbox_type": "KATA"`, "sandbox_type", "must be one of"},
		{"lower-case sandbox type", `"sandbox_type": "microvm"`, "sandbox_type", "must be one of"},
		{"image type for a MicroVM pool", `"sandbox_type": "MICROVM", "image_type": "UBUNTU_CONTAINERD"`, "image_type", "no public GKE documentation names an image for MicroVM"},
		{"bad workload metadata mode", `"workload_metadata_mode": "EXPOSE"`, "workload_metadata_mode", "must be one of"},
		{"bad oauth scope", `"oauth_scopes": ["cloud-platform"]`, `oauth_scopes["cloud-platform"]`, "must be a scope URL"},
		{"bad service account", `"service_account": "nodes"`, "service_account", "not a service account email"},
		{"bad project", `"project": "My Project"`, "project", "not a project ID"},
		{"cluster full name", `"cluster": "projects/p/locations/l/clusters/c"`, "cluster", "short name"},
		{"bad pool name", `"name": "Sandbox_Pool"`, "name", "node pool name"},
		{"negative node count", `"node_count": -1`, "node_count", "at least 0"},
		{"max above 1000", `"autoscaling": {"max_node_count": 1001}`, "autoscaling.max_node_count", "between 1 and 1000"},
		{"bad location policy", `"autoscaling": {"max_node_count": 3, "location_policy": "NEAREST"}`, "autoscaling.location_policy", "must be one of"},
		{"negative min", `"autoscaling": {"min_node_count": -1, "max_node_count": 3}`, "autoscaling.min_node_count", "at least 0"},
		{"total max of 0", `"autoscaling": {"total_max_node_count": 0}`, "autoscaling.total_max_node_count", "at least 1"},
		{"negative total min", `"autoscaling": {"total_min_node_count": -1, "total_max_node_count": 3}`, "autoscaling.total_min_node_count", "at least 0"},
		{"taint value with a space", `"taints": [{"key": "dedicated", "value": "ai agents", "effect": "NO_SCHEDULE"}]`, "taints[0].value", "label value"},
		{"negative max unavailable", `"upgrade_settings": {"max_surge": 1, "max_unavailable": -1}`, "upgrade_settings.max_unavailable", "at least 0"},
	} {
		// Later keys win in the JSON decoder's map, so a case may
		// override a base attribute.
		cases = append(cases, pt.Refused(tc.name, config(t, "{"+base+", "+tc.json+"}"), tc.path, tc.detail))
	}
	server.ExpectRefused(t, nodePoolType, cases)

	// With no project anywhere (none in the configuration, no provider
	// gke.project, nothing in state) the plan says where to set one.
	_, planDiags := server.Plan(t, nodePoolType, config(t, "{"+base+"}"))
	pt.ExpectErrorAt(t, planDiags, "project", "No GKE project", "gke.project")

	// And a good configuration passes.
	diags := server.ValidateResource(t, nodePoolType, config(t, `{`+base+`, "autoscaling": {"min_node_count": 0, "max_node_count": 3},
			"labels": {"team": "agents"}, "taints": [{"key": "dedicated", "value": "agents", "effect": "NO_SCHEDULE"}],
			"node_locations": ["us-central1-a"], "version": "1.35", "machine_type": "e2-standard-4"}`))
	for _, d := range diags {
		t.Errorf("good configuration: %s: %s: %s", pt.AttributePath(d.Attribute), d.Summary, d.Detail)
	}
}
