package gke_test

import (
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// TestReadWarnings: what a read finds that this provider would not have
// made is a warning at the attribute it concerns, and the read goes on: a
// regular pool imported into agentsandbox_gke_node_pool (the next plan
// replaces it), and a cluster CA GKE sends in an unknown encoding (passed on
// unchanged).
func TestReadWarnings(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{CACertificatePEM: []byte("not a certificate")})
	s := pt.New(t, provider.New("test"))
	if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{"gke": map[string]any{
		"endpoint": env.URL, "access_token": "test", "project": emutest.Project, "allow_credentials_over_http": true,
	}})); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}

	t.Run("a regular pool imported", func(t *testing.T) {
		diags, kept := s.ImportThenRead(t, nodePoolType, env.ClusterName+"/nodePools/default-pool")
		if errs := pt.Errors(diags); len(errs) > 0 || !kept {
			t.Fatalf("kept %v:\n  %s", kept, pt.Describe(diags))
		}
		pt.ExpectWarningAt(t, diags, "sandbox_type", "Not a GKE Sandbox node pool", "default-pool", "replaces the pool")
	})

	t.Run("a CA in an unknown encoding", func(t *testing.T) {
		diags := s.ReadDataSource(t, "agentsandbox_gke_cluster", map[string]any{
			"location": emutest.Location, "name": emutest.Cluster,
		})
		if errs := pt.Errors(diags); len(errs) > 0 {
			t.Fatal(pt.Describe(errs))
		}
		pt.ExpectWarningAt(t, diags, "ca_certificate", "Unexpected cluster CA encoding", "passed on unchanged")
	})
}
