package gke_test

import (
	"strings"
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The bad-input table of agentsandbox_gke_pod_snapshots: refused at
// validate on its attribute, before any call to GKE.
func TestPodSnapshotsBadInputTable(t *testing.T) {
	const typ = "agentsandbox_gke_pod_snapshots"
	a := func(k string, v any) map[string]any {
		cfg := map[string]any{"project": "my-project", "location": "us-central1", "cluster": "agents"}
		cfg[k] = v
		return cfg
	}
	cases := []pt.BadInput{
		pt.Refused("empty project", a("project", ""), "project"),
		pt.Refused("project display name", a("project", "My Project"), "project", `"My Project"`),
		pt.Refused("project too long", a("project", strings.Repeat("p", 31)), "project"),
		pt.Refused("empty location", a("location", ""), "location"),
		pt.Refused("location in capitals", a("location", "US-CENTRAL1"), "location", `"US-CENTRAL1"`),
		pt.Refused("cluster full resource name", a("cluster", "projects/p/locations/l/clusters/c"), "cluster", "short name"),
		pt.Refused("cluster with underscore", a("cluster", "agents_1"), "cluster", `"agents_1"`),
		pt.Refused("create timeout without unit", a("timeouts", map[string]any{"create": "10"}), "timeouts.create"),
		pt.Refused("delete timeout in words", a("timeouts", map[string]any{"delete": "ten minutes"}), "timeouts.delete"),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, typ, cases)
	t.Logf("%s: %d refused at validate", typ, len(cases))
}
