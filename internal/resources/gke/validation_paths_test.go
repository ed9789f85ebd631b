package gke_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// pathString renders a protocol attribute path as in HCL:
// taints[0].key, labels["k"], node_locations["europe-west1-b"].
func pathString(p *tftypes.AttributePath) string {
	if p == nil {
		return "<none>"
	}
	var b strings.Builder
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		case tftypes.ElementKeyValue:
			var v string
			if err := tftypes.Value(s).As(&v); err == nil {
				fmt.Fprintf(&b, "[%q]", v)
			} else {
				b.WriteString("[?]")
			}
		}
	}
	return b.String()
}

// TestNodePoolValidationPaths sends bad configurations to the provider as
// Terraform does (ValidateResourceConfig over protocol 6) and checks that
// each error carries the exact attribute path, including paths inside
// nested attributes, which the CLI cannot show. No TF_ACC needed: nothing
// leaves the process.
func TestNodePoolValidationPaths(t *testing.T) {
	server, err := acctest.ProtoV6ProviderFactories[acctest.ProviderName]()
	if err != nil {
		t.Fatal(err)
	}
	const base = `"location": "us-central1", "cluster": "emu-cluster", "name": "sandbox"`
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
		{"bad sandbox type", `"sandbox_type": "MICROVM"`, "sandbox_type", "must be one of"},
		{"bad workload metadata mode", `"workload_metadata_mode": "EXPOSE"`, "workload_metadata_mode", "must be one of"},
		{"bad oauth scope", `"oauth_scopes": ["cloud-platform"]`, `oauth_scopes["cloud-platform"]`, "must be a scope URL"},
		{"bad service account", `"service_account": "nodes"`, "service_account", "not a service account email"},
		{"bad project", `"project": "My Project"`, "project", "not a project ID"},
		{"cluster full name", `"cluster": "projects/p/locations/l/clusters/c"`, "cluster", "short name"},
		{"bad pool name", `"name": "Sandbox_Pool"`, "name", "node pool name"},
		{"negative node count", `"node_count": -1`, "node_count", "at least 0"},
		{"max above 1000", `"autoscaling": {"max_node_count": 1001}`, "autoscaling.max_node_count", "between 1 and 1000"},
		{"bad location policy", `"autoscaling": {"max_node_count": 3, "location_policy": "NEAREST"}`, "autoscaling.location_policy", "must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Later keys win in the JSON decoder's map, so a case may
			// override a base attribute.
			body := "{" + base + ", " + tc.json + "}"
			resp, err := server.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
				TypeName: "agentsandbox_gke_node_pool",
				Config:   &tfprotov6.DynamicValue{JSON: []byte(body)},
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range resp.Diagnostics {
				if d.Severity != tfprotov6.DiagnosticSeverityError {
					continue
				}
				p := pathString(d.Attribute)
				got = append(got, p+": "+d.Summary+": "+d.Detail)
				if p == tc.path && strings.Contains(d.Detail, tc.detail) {
					return
				}
			}
			t.Errorf("want an error at %s mentioning %q; got %q", tc.path, tc.detail, got)
		})
	}

	// And a good configuration passes.
	resp, err := server.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName: "agentsandbox_gke_node_pool",
		Config: &tfprotov6.DynamicValue{JSON: []byte(`{` + base + `, "autoscaling": {"min_node_count": 0, "max_node_count": 3},
			"labels": {"team": "agents"}, "taints": [{"key": "dedicated", "value": "agents", "effect": "NO_SCHEDULE"}],
			"node_locations": ["us-central1-a"], "version": "1.35", "machine_type": "e2-standard-4"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("good configuration: %s: %s: %s", pathString(d.Attribute), d.Summary, d.Detail)
	}
}
