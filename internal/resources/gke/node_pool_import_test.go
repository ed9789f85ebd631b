package gke_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// madeElsewhere is the create request of a gVisor pool as gcloud sends it for
//
//	gcloud container node-pools create agents --cluster emu-cluster --location us-central1 \
//	  --sandbox type=gvisor --image-type cos_containerd --machine-type n2-standard-4 \
//	  --num-nodes 2 --disk-size 100 --node-labels team=agents \
//	  --node-taints dedicated=agents:NoSchedule --workload-metadata GKE_METADATA \
//	  --shielded-integrity-monitoring --max-pods-per-node 64 --tags agents \
//	  --labels cost-center=ml --system-config-from-file kubelet-and-sysctls.yaml \
//	  --enable-private-nodes
//
// (and as google_container_node_pool sends the same settings): besides what
// agentsandbox_gke_node_pool manages, it sets fields this provider never
// reads or writes (resource labels, network tags, kubelet and Linux node
// configuration, private nodes, max pods, metadata), and it leaves secure
// boot off, GKE's default and not this provider's. It is sent through the
// emulator's API, so the discovery-document guard checks it like any request.
const madeElsewhere = `{"nodePool": {
  "name": "agents",
  "initialNodeCount": 2,
  "config": {
    "machineType": "n2-standard-4",
    "diskSizeGb": 100,
    "diskType": "pd-balanced",
    "imageType": "COS_CONTAINERD",
    "sandboxConfig": {"type": "GVISOR"},
    "labels": {"team": "agents"},
    "taints": [{"key": "dedicated", "value": "agents", "effect": "NO_SCHEDULE"}],
    "serviceAccount": "default",
    "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
    "metadata": {"disable-legacy-endpoints": "true"},
    "resourceLabels": {"cost-center": "ml"},
    "tags": ["agents"],
    "kubeletConfig": {"cpuManagerPolicy": "static", "podPidsLimit": "4096"},
    "linuxNodeConfig": {"sysctls": {"net.core.somaxconn": "2048"}},
    "workloadMetadataConfig": {"mode": "GKE_METADATA"},
    "shieldedInstanceConfig": {"enableIntegrityMonitoring": true}
  },
  "management": {"autoUpgrade": true, "autoRepair": true},
  "maxPodsConstraint": {"maxPodsPerNode": "64"},
  "networkConfig": {"enablePrivateNodes": true},
  "upgradeSettings": {"maxSurge": 1, "maxUnavailable": 0}
}}`

// seedPoolMadeElsewhere creates madeElsewhere through the emulator's API,
// with each old string of edits replaced by the new one, and waits until
// the pool is RUNNING.
func seedPoolMadeElsewhere(t *testing.T, env *emutest.Env, edits ...string) string {
	t.Helper()
	body := strings.NewReplacer(edits...).Replace(madeElsewhere)
	var sent struct{ NodePool struct{ Name string } }
	if err := json.Unmarshal([]byte(body), &sent); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, env.URL+"v1/"+env.ClusterName+"/nodePools", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("creating the pool as gcloud does: %s", resp.Status)
	}
	id := env.ClusterName + "/nodePools/" + sent.NodePool.Name
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if np, ok := env.NodePool(id); ok && np.Status == "RUNNING" {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("node pool %s never became RUNNING", id)
		}
	}
}

// importedPoolConfig is what a user writes for madeElsewhere: the settings
// this provider manages, as gcloud set them, secure boot off included.
const importedPoolConfig = `
  node_count   = 2
  machine_type = "n2-standard-4"
  disk_size_gb = 100
  labels       = { team = "agents" }
  taints       = [{ key = "dedicated", value = "agents", effect = "NO_SCHEDULE" }]
  shielded_instance_config = { enable_secure_boot = false, enable_integrity_monitoring = true }
`

// TestAccGKENodePool_importMadeElsewhere: a gVisor pool created by gcloud (or
// the Google provider), with fields this provider does not manage, imports
// by the Google provider's ID with no diff when the configuration states
// what this provider manages; an update in place keeps every field it does
// not manage; leaving secure boot to this provider's hardened default
// replaces the pool, which the plan says (see TestImportMadeElsewhereWarns).
func TestAccGKENodePool_importMadeElsewhere(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	seedPoolMadeElsewhere(t, env)
	keptUnmanaged := func(wantLabels map[string]string) resource.TestCheckFunc {
		return checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
			c := np.Config
			switch {
			case c.KubeletConfig == nil || c.KubeletConfig.CpuManagerPolicy != "static" || c.KubeletConfig.PodPidsLimit != 4096:
				return fmt.Errorf("kubeletConfig %+v, want the one gcloud set", c.KubeletConfig)
			case c.LinuxNodeConfig == nil || c.LinuxNodeConfig.Sysctls["net.core.somaxconn"] != "2048":
				return fmt.Errorf("linuxNodeConfig %+v, want the one gcloud set", c.LinuxNodeConfig)
			case c.ResourceLabels["cost-center"] != "ml" || len(c.Tags) != 1 || c.Tags[0] != "agents":
				return fmt.Errorf("resourceLabels %v tags %v, want gcloud's", c.ResourceLabels, c.Tags)
			case np.NetworkConfig == nil || !np.NetworkConfig.EnablePrivateNodes:
				return fmt.Errorf("networkConfig %+v, want private nodes", np.NetworkConfig)
			case np.MaxPodsConstraint == nil || np.MaxPodsConstraint.MaxPodsPerNode != 64:
				return fmt.Errorf("maxPodsConstraint %+v, want 64", np.MaxPodsConstraint)
			case c.ShieldedInstanceConfig == nil || c.ShieldedInstanceConfig.EnableSecureBoot:
				return fmt.Errorf("shieldedInstanceConfig %+v, want secure boot still off", c.ShieldedInstanceConfig)
			}
			for k, v := range wantLabels {
				if c.Labels[k] != v {
					return fmt.Errorf("labels %v, want %s=%s", c.Labels, k, v)
				}
			}
			return nil
		})
	}
	resource.Test(t, pools(env).Case(t,
		resource.TestStep{
			// terraform import agentsandbox_gke_node_pool.test emu-project/us-central1/emu-cluster/agents
			Config:             testAccNodePoolConfig(env, "agents", importedPoolConfig),
			ResourceName:       poolAddr,
			ImportState:        true,
			ImportStateId:      emutest.Project + "/" + emutest.Location + "/" + emutest.Cluster + "/agents",
			ImportStatePersist: true,
		},
		resource.TestStep{
			// terraform plan: nothing to do.
			Config:   testAccNodePoolConfig(env, "agents", importedPoolConfig),
			PlanOnly: true,
		},
		resource.TestStep{
			Config: testAccNodePoolConfig(env, "agents", strings.Replace(importedPoolConfig,
				`labels       = { team = "agents" }`, `labels       = { team = "agents", tier = "sandbox" }`, 1)),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionUpdate),
			Check:            keptUnmanaged(map[string]string{"team": "agents", "tier": "sandbox", "sandbox.gke.io/runtime": "gvisor"}),
		},
		resource.TestStep{
			// The hardened default for secure boot: GKE cannot change it in
			// place, so the plan replaces the pool (and the new one has
			// none of gcloud's extra settings).
			Config: testAccNodePoolConfig(env, "agents", strings.Replace(strings.Replace(importedPoolConfig,
				`labels       = { team = "agents" }`, `labels       = { team = "agents", tier = "sandbox" }`, 1),
				"  shielded_instance_config = { enable_secure_boot = false, enable_integrity_monitoring = true }\n", "", 1)),
			ConfigPlanChecks: acctest.PlannedAt(poolAddr, plancheck.ResourceActionDestroyBeforeCreate),
			Check: checkPool(env, poolAddr, func(np *container.NodePool, _ int64) error {
				if sh := np.Config.ShieldedInstanceConfig; sh == nil || !sh.EnableSecureBoot {
					return fmt.Errorf("shieldedInstanceConfig %+v, want secure boot on after the replacement", sh)
				}
				return nil
			}),
		},
	))
}

// TestImportMadeElsewhereWarns: after importing the pool gcloud made, a plan
// that changes it only because the configuration leaves an attribute to
// this provider's default names the attribute, GKE's value, the default,
// whether the pool is replaced, and what to write to keep it; a
// configuration that states GKE's values plans with no such warning. The
// Google provider's ID forms import too.
func TestImportMadeElsewhereWarns(t *testing.T) {
	env := startEmulator(t, gkeemu.ClusterSpec{})
	seedPoolMadeElsewhere(t, env)
	s := pt.New(t, provider.New("test"))
	if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{"gke": map[string]any{
		"endpoint": env.URL, "access_token": "test", "project": emutest.Project, "allow_credentials_over_http": true,
	}})); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}
	identity := map[string]any{"location": emutest.Location, "cluster": emutest.Cluster, "name": "agents"}
	with := func(extra map[string]any) map[string]any {
		cfg := map[string]any{}
		for k, v := range identity {
			cfg[k] = v
		}
		for k, v := range extra {
			cfg[k] = v
		}
		return cfg
	}
	stated := map[string]any{
		"node_count": 2, "machine_type": "n2-standard-4", "disk_size_gb": 100,
		"labels":                   map[string]any{"team": "agents"},
		"taints":                   []any{map[string]any{"key": "dedicated", "value": "agents", "effect": "NO_SCHEDULE"}},
		"shielded_instance_config": map[string]any{"enable_secure_boot": false, "enable_integrity_monitoring": true},
	}

	for _, id := range []string{
		env.ClusterName + "/nodePools/agents",
		emutest.Project + "/" + emutest.Location + "/" + emutest.Cluster + "/agents", // google_container_node_pool's ID
		emutest.Location + "/" + emutest.Cluster + "/agents",                         // the same in the provider's project
	} {
		t.Run("stated "+id, func(t *testing.T) {
			diags := s.ImportReadPlan(t, nodePoolType, id, with(stated))
			if len(diags) > 0 {
				t.Errorf("a configuration stating GKE's values planned with diagnostics:\n  %s", pt.Describe(diags))
			}
		})
	}

	t.Run("secure boot left to the default", func(t *testing.T) {
		cfg := with(stated)
		delete(cfg, "shielded_instance_config")
		diags := s.ImportReadPlan(t, nodePoolType, env.ClusterName+"/nodePools/agents", cfg)
		if errs := pt.Errors(diags); len(errs) > 0 {
			t.Fatal(pt.Describe(errs))
		}
		pt.ExpectWarningAt(t, diags, "shielded_instance_config", "Node pool changed by a default",
			"GKE holds shielded_instance_config = { enable_integrity_monitoring = true, enable_secure_boot = false }",
			"default { enable_integrity_monitoring = true, enable_secure_boot = true }", "REPLACES the pool",
			"gcloud", "write shielded_instance_config = { enable_integrity_monitoring = true, enable_secure_boot = false }")
	})

	t.Run("metadata server left to the default", func(t *testing.T) {
		// A pool made with --workload-metadata GCE_METADATA: the default
		// GKE_METADATA changes it in place.
		id := seedPoolMadeElsewhere(t, env, `"name": "agents"`, `"name": "exposed"`, `{"mode": "GKE_METADATA"}`, `{"mode": "GCE_METADATA"}`)
		cfg := with(stated)
		cfg["name"] = "exposed"
		diags := s.ImportReadPlan(t, nodePoolType, id, cfg)
		if errs := pt.Errors(diags); len(errs) > 0 {
			t.Fatal(pt.Describe(errs))
		}
		pt.ExpectWarningAt(t, diags, "workload_metadata_mode", "Node pool changed by a default",
			`GKE holds workload_metadata_mode = "GCE_METADATA"`, `default "GKE_METADATA"`, "changes it in place",
			`write workload_metadata_mode = "GCE_METADATA"`)
		for _, d := range diags {
			if d.Summary == "Node pool changed by a default" && !strings.Contains(d.Detail, "workload_metadata_mode") {
				t.Errorf("an attribute equal to GKE's value warned: %s", d.Detail)
			}
		}
	})
}
