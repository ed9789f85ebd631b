package gkeapi

import (
	"strings"
	"testing"
)

func TestParseClusterName(t *testing.T) {
	want := ClusterName{Project: "my-project", Location: "us-central1", Cluster: "agents"}
	for _, in := range []string{
		"projects/my-project/locations/us-central1/clusters/agents",
		" projects/my-project/zones/us-central1/clusters/agents ",
		"https://container.googleapis.com/v1/projects/my-project/zones/us-central1/clusters/agents",
	} {
		got, err := ParseClusterName(in)
		if err != nil || got != want {
			t.Errorf("ParseClusterName(%q) = %+v, %v", in, got, err)
		}
	}
	if s := want.String(); s != "projects/my-project/locations/us-central1/clusters/agents" {
		t.Errorf("String = %q", s)
	}
	if p := want.Parent(); p != "projects/my-project/locations/us-central1" {
		t.Errorf("Parent = %q", p)
	}

	bad := map[string]string{
		"agents":                                        "1 path segments instead of 6",
		"projects/p/locations/l/clusters/":              "segment 6 is empty",
		"projects/p/regions/l/clusters/c":               `segment 3 is "regions" instead of "locations"`,
		"projects/p/locations/l/clusters/Agents":        "must be 1 to 40 lowercase letters",
		"projects/p/locations/l/clusters/c/nodePools/n": "8 path segments instead of 6",
		"projects/P_P/locations/l/clusters/c":           `project "P_P"`,
		"projects/p/locations/US/clusters/c":            `location "US"`,
	}
	for in, why := range bad {
		_, err := ParseClusterName(in)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseClusterName(%q) err = %v, want it to say %q", in, err, why)
			continue
		}
		if !strings.Contains(err.Error(), ClusterNameShape) && !strings.Contains(err.Error(), "invalid GKE cluster name") {
			t.Errorf("error %q neither shows the expected shape nor names the kind", err)
		}
	}
}

func TestParseNodePoolName(t *testing.T) {
	in := "projects/p-1/locations/europe-west4-a/clusters/c/nodePools/gvisor-pool"
	n, err := ParseNodePoolName(in)
	if err != nil {
		t.Fatal(err)
	}
	if n.NodePool != "gvisor-pool" || n.Cluster != "c" || n.String() != in || n.ClusterName.String() != "projects/p-1/locations/europe-west4-a/clusters/c" {
		t.Errorf("parsed %+v", n)
	}
	if n.ClusterName.NodePool("gvisor-pool") != n {
		t.Error("ClusterName.NodePool does not round-trip")
	}
	for in, why := range map[string]string{
		"projects/p/locations/l/clusters/c":                                      NodePoolNameShape,
		"projects/p/locations/l/clusters/c/pools/n":                              `"pools" instead of "nodePools"`,
		"projects/p/locations/l/clusters/c/nodePools/pool-":                      "not end with a hyphen",
		"projects/p/locations/l/clusters/c/nodePools/" + strings.Repeat("a", 41): "1 to 40",
	} {
		if _, err := ParseNodePoolName(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseNodePoolName(%q) err = %v, want %q", in, err, why)
		}
	}
}

func TestRegionOf(t *testing.T) {
	for in, want := range map[string][2]string{ // RegionOf, ZoneRegion
		"us-central1":               {"us-central1", ""},
		"europe-west4-b":            {"europe-west4", "europe-west4"},
		"us-central":                {"", ""},
		"US-CENTRAL1":               {"", ""},
		"us-central1-ab":            {"", ""},
		"northamerica-northeast2-c": {"northamerica-northeast2", "northamerica-northeast2"},
	} {
		if got := [2]string{RegionOf(in), ZoneRegion(in)}; got != want {
			t.Errorf("%q: RegionOf, ZoneRegion = %q, want %q", in, got, want)
		}
	}
}
