// Package clusteracc_test is the end-to-end test of the GKE family: a gVisor node
// pool and a SandboxTemplate created in one apply, the template reaching
// the cluster only through the provider's kubernetes.gke_cluster
// credentials (endpoint and CA from the container API, bearer token from
// the gke block). The container API is the emulator (internal/testing/gkeemu); its
// cluster's endpoint and CA are those of the real local control plane that
// acctest.Main starts, so the template is written to a real API server.
//
// It lives apart from package gke because it needs that control plane:
// the rest of the family's tests need none and stay fast.
package clusteracc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

// TestMain keeps the provider's HTTP traffic on 127.0.0.1 (the emulator and
// the local control plane), makes the GKE client poll fast, and lets
// acctest.Main provide the control plane.
func TestMain(m *testing.M) {
	emutest.Isolate()
	emutest.FastGKEClient()
	acctest.Main(m)
}

const (
	poolAddr     = "agentsandbox_gke_node_pool.sandbox"
	templateType = "agentsandbox_sandbox_template"
)

// localControlPlane seeds the emulated cluster with the test cluster's API
// server address and CA, and returns the static admin bearer token
// internal/devenv/localcluster writes next to its kubeconfig. It skips the test
// for a cluster without that token (a kind cluster given through
// KUBECONFIG): no token the GKE credentials could carry would be accepted.
func localControlPlane(t *testing.T) (gkeemu.ClusterSpec, string) {
	t.Helper()
	kubeconfig := acctest.Kubeconfig()
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(kubeconfig), "admin-token"))
	if err != nil {
		t.Skipf("the test cluster (%s) has no admin-token file next to its kubeconfig; this test needs the "+
			"local control plane of internal/devenv/localcluster, whose static token the GKE credentials can carry", kubeconfig)
	}
	var spec gkeemu.ClusterSpec
	if err := gkeemu.AccessFromKubeconfig(&spec, kubeconfig, ""); err != nil {
		t.Fatal(err)
	}
	return spec, strings.TrimSpace(string(raw))
}

// requireTemplateResource skips when the provider does not serve
// agentsandbox_sandbox_template (yet).
func requireTemplateResource(t *testing.T) {
	t.Helper()
	server, err := acctest.ProtoV6ProviderFactories[acctest.ProviderName]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := resp.ResourceSchemas[templateType]; !ok {
		t.Skipf("the provider does not register %s yet", templateType)
	}
}

// TestAccGKE_nodePoolThenTemplateThroughGKECredentials is issue 7's end to
// end: one configuration, one apply, the template created after the pool
// on the cluster the provider found through the container API.
func TestAccGKE_nodePoolThenTemplateThroughGKECredentials(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	requireTemplateResource(t)
	spec, token := localControlPlane(t)
	env := emutest.Start(t, gkeemu.Options{PendingDuration: 20 * time.Millisecond, RunningDuration: 80 * time.Millisecond}, spec)
	ns := acctest.Namespace(t)
	name := acctest.RandomName("e2e")

	config := fmt.Sprintf(`
provider %[1]q {
  gke {
    endpoint     = %[2]q
    access_token = %[3]q
    project      = %[4]q
    # The emulator speaks plain HTTP on loopback.
    allow_credentials_over_http = true
  }
  kubernetes {
    gke_cluster = %[5]q
  }
}

resource "agentsandbox_gke_node_pool" "sandbox" {
  location = %[6]q
  cluster  = %[7]q
  name     = "sandbox"
}

resource "agentsandbox_sandbox_template" "python" {
  name      = %[8]q
  namespace = %[9]q
  pod_template = {
    security_context = { run_as_user = 10001 }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      resources = {
        requests = { cpu = "500m", memory = "1Gi" }
        limits   = { cpu = "1", memory = "1Gi" }
      }
    }]
  }
  # Sandboxes need the gVisor nodes first.
  depends_on = [agentsandbox_gke_node_pool.sandbox]
}
`, acctest.ProviderName, env.URL, token, emutest.Project, env.ClusterName, emutest.Location, emutest.Cluster, name, ns)

	template := acctest.ObjectRef{GVR: sandboxapi.SandboxTemplateGVR, Namespace: ns, Name: name}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(
			acctest.CheckDestroy(templateType, sandboxapi.SandboxTemplateGVR),
			func(*terraform.State) error {
				if _, ok := env.NodePool(env.ClusterName + "/nodePools/sandbox"); ok {
					return fmt.Errorf("node pool still exists")
				}
				return nil
			},
		),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("agentsandbox_sandbox_template.python", plancheck.ResourceActionCreate),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: func(*terraform.State) error {
				np, ok := env.NodePool(env.ClusterName + "/nodePools/sandbox")
				if !ok || np.Status != "RUNNING" {
					return fmt.Errorf("node pool: %v", np)
				}
				obj, err := acctest.GetObject(context.Background(), template)
				if err != nil {
					return fmt.Errorf("the template is not in the cluster: %w", err)
				}
				if rc, _, _ := unstructuredString(obj.Object, "spec", "podTemplate", "spec", "runtimeClassName"); rc != "gvisor" {
					return fmt.Errorf("template runtimeClassName = %q", rc)
				}
				// The Kubernetes connection came from the container API.
				if env.Requests()[gkeapi.MethodClustersGet] == 0 {
					return fmt.Errorf("the provider never read the cluster from the container API: %v", env.Requests())
				}
				return nil
			},
		}},
	})
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
