package gke_test

import (
	"strings"
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The bad-input table of agentsandbox_gke_addon (issue 13): a project,
// location or cluster spelt as people get them wrong is refused at validate
// on its attribute, before any call to GKE or Kubernetes.
func TestAddonBadInputTable(t *testing.T) {
	const typ = "agentsandbox_gke_addon"
	a := func(k string, v any) map[string]any {
		cfg := map[string]any{"project": "my-project", "location": "us-central1", "cluster": "agents"}
		cfg[k] = v
		return cfg
	}
	cases := []pt.BadInput{
		pt.Refused("empty project", a("project", ""), "project"),
		pt.Refused("project display name", a("project", "My Project"), "project", `"My Project"`),
		pt.Refused("project with underscore", a("project", "my_project"), "project", `"my_project"`),
		pt.Refused("project starting with a digit", a("project", "1project"), "project", `"1project"`),
		pt.Refused("project too short", a("project", "proj"), "project", `"proj"`),
		pt.Refused("project too long", a("project", strings.Repeat("p", 31)), "project"),
		pt.Refused("project ending with a dash", a("project", "my-project-"), "project", `"my-project-"`),
		pt.Refused("project number with spaces", a("project", "123 456"), "project"),
		pt.Refused("empty location", a("location", ""), "location"),
		pt.Refused("location without number", a("location", "us-central"), "location", `"us-central"`),
		pt.Refused("location in capitals", a("location", "US-CENTRAL1"), "location", `"US-CENTRAL1"`),
		pt.Refused("location with trailing dash", a("location", "us-central1-"), "location"),
		pt.Refused("location with a space", a("location", "europe west1"), "location"),
		pt.Refused("empty cluster", a("cluster", ""), "cluster"),
		pt.Refused("cluster full resource name", a("cluster", "projects/p/locations/l/clusters/c"), "cluster", "short name"),
		pt.Refused("cluster with capitals", a("cluster", "Agents"), "cluster", `"Agents"`),
		pt.Refused("cluster with underscore", a("cluster", "agents_1"), "cluster", `"agents_1"`),
		pt.Refused("cluster starting with a dash", a("cluster", "-agents"), "cluster"),
		pt.Refused("cluster too long", a("cluster", strings.Repeat("c", 41)), "cluster"),
		pt.Refused("create timeout without unit", a("timeouts", map[string]any{"create": "10"}), "timeouts.create"),
		pt.Refused("delete timeout in words", a("timeouts", map[string]any{"delete": "ten minutes"}), "timeouts.delete"),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, typ, cases)
	t.Logf("%s: %d refused at validate", typ, len(cases))
}
