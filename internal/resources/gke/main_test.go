package gke_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The end-to-end test of the family (a node pool and a SandboxTemplate in
// one apply, through kubernetes.gke_cluster credentials) is in package
// internal/resources/gke/clusteracc, as it needs the local control plane.

// TestMain keeps every request of this package on 127.0.0.1 (the provider
// runs in this process) and makes the GKE client poll fast. These tests
// need no Kubernetes cluster: each starts its own GKE emulator, so they do
// not use acctest.Main.
func TestMain(m *testing.M) {
	cleanup := emutest.Isolate()
	emutest.FastGKEClient()
	code := m.Run()
	if code == 0 {
		if err := (pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_gke_node_pool", "agentsandbox_gke_addon", "agentsandbox_gke_pod_snapshots"},
			DataSources: []string{"agentsandbox_gke_cluster"}, Sources: []string{"."}}).Check(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	cleanup()
	os.Exit(code)
}

// startEmulator serves a GKE emulator with the seeded cluster
// emutest.ClusterName (with its regular default-pool) for this test.
func startEmulator(t *testing.T, spec gkeemu.ClusterSpec) *emutest.Env {
	t.Helper()
	return emutest.Start(t, gkeemu.Options{PendingDuration: 20 * time.Millisecond, RunningDuration: 80 * time.Millisecond}, spec)
}

// providerConfig points the provider's GKE client at the emulator. No
// kubernetes block: the GKE resources never build a Kubernetes client.
func providerConfig(env *emutest.Env) string {
	return fmt.Sprintf(`provider %q {
  gke {
    endpoint     = %q
    access_token = "test"
    project      = %q
    # The emulator speaks plain HTTP on loopback.
    allow_credentials_over_http = true
  }
}
`, acctest.ProviderName, env.URL, emutest.Project)
}

// The families of the GKE resources against one emulator: no Kubernetes
// cluster, and CheckDestroy asks the emulator.
func pools(env *emutest.Env) acctest.Family  { return gkeFamily(env, "agentsandbox_gke_node_pool") }
func addons(env *emutest.Env) acctest.Family { return gkeFamily(env, "agentsandbox_gke_addon") }
func snapshots(env *emutest.Env) acctest.Family {
	return gkeFamily(env, "agentsandbox_gke_pod_snapshots")
}

func gkeFamily(env *emutest.Env, resourceType string) acctest.Family {
	return acctest.Family{ResourceType: resourceType, NoCluster: true, Destroyed: checkDestroyed(env)}
}

// checkDestroyed asks the emulator that every node pool in the state is
// gone and every add-on and feature in the state is off.
func checkDestroyed(env *emutest.Env) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, rs := range s.RootModule().Resources {
			switch rs.Type {
			case "agentsandbox_gke_node_pool":
				if np, ok := env.NodePool(rs.Primary.ID); ok {
					return fmt.Errorf("node pool %s still exists (status %s)", rs.Primary.ID, np.Status)
				}
			case "agentsandbox_gke_addon":
				if c, ok := env.Cluster(rs.Primary.ID); ok && c.AddonsConfig.AgentSandboxConfig != nil && c.AddonsConfig.AgentSandboxConfig.Enabled {
					return fmt.Errorf("the Agent Sandbox add-on of %s is still enabled", rs.Primary.ID)
				}
			case "agentsandbox_gke_pod_snapshots":
				if c, ok := env.Cluster(rs.Primary.ID); ok && gkeapi.PodSnapshotsEnabled(c) {
					return fmt.Errorf("Pod snapshots of %s are still enabled", rs.Primary.ID)
				}
			}
		}
		return nil
	}
}

// checkPool runs check on the pool as the emulator holds it (GKE's view,
// including GKE's own label and taint) and its size per zone.
func checkPool(env *emutest.Env, addr string, check func(np *container.NodePool, size int64) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		np, ok := env.NodePool(rs.Primary.ID)
		if !ok {
			return fmt.Errorf("node pool %s does not exist in the emulator", rs.Primary.ID)
		}
		size, _ := env.NodePoolSize(rs.Primary.ID)
		if err := check(np, size); err != nil {
			return fmt.Errorf("%s: %w", rs.Primary.ID, err)
		}
		return nil
	}
}
