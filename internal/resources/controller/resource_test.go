package controller_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/controller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// The acceptance tests install upstream's own release assets (package
// bundles, served by a loopback server laid out as GitHub's releases) into
// the real agent-sandbox-system namespace and the cluster's agent-sandbox
// CRDs, which the harness installed from its release (by default v1.0.3,
// the newest real release). Installing v0.5.0 or v0.5.6 replaces those
// CRDs' schemas with older ones (v0.5.x: no claim
// status.sandbox.serviceFQDN, an older PodSpec; v0.5.0: no warm pool
// status.observedGeneration), which would prune those fields from objects
// other packages write meanwhile, so `make test` runs this package after
// the others, alone. The tests run one after another (no t.Parallel), end
// every lifecycle on the v1.0.3 CRDs, and never delete those CRDs: the
// CRD-removing destroy is tested on a CRD of its own
// (TestAccController_destroyRemovesCRDsWhenOptedIn).

// TestAccController_upgradeV05ToV10 is the upgrade users get hurt by:
// v0.5 → v1.0 drops v1alpha1 and the conversion webhook.
func TestAccController_upgradeV05ToV10(t *testing.T) {
	rs := newReleaseServer(t)
	ns := acctest.Namespace(t)
	var sandboxUID types.UID
	var upgradeStart time.Time

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkGone(controllerDeployment, acctest.ObjectRef{GVR: namespaceGVR, Name: controllerNS}),
			// keep_crds_on_destroy defaults to true: the CRDs, and with
			// them every Sandbox, stay.
			checkExists(acctest.ObjectRef{GVR: crdGVR, Name: sandboxCRDs[0]}, acctest.ObjectRef{GVR: crdGVR, Name: sandboxCRDs[3]}),
			checkSandboxSurvived(ns, "survivor", &sandboxUID),
		),
		Steps: []resource.TestStep{
			{
				// Install the v0.5-shaped release: webhook conversion,
				// v1alpha1 served, webhook Service, Role and RoleBinding.
				Config: configRelease(rs.URL, "v0.5.6"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("id"), knownvalue.StringExact(controllerNS+"/v0.5.6")),
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(controllerNS)),
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(15)),
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey("Service/"+controllerNS+"/agent-sandbox-webhook-service"),
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"api_version": knownvalue.StringExact("v1"), "kind": knownvalue.StringExact("Service"),
							"namespace": knownvalue.StringExact(controllerNS), "name": knownvalue.StringExact("agent-sandbox-webhook-service"),
							"digest": knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{64}$`)), "drift": knownvalue.StringExact(""),
						})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkCRDVersions([]string{"v1alpha1", "v1beta1"}, "Webhook", []string{"v1beta1"}),
					checkExists(webhookObjects[0], webhookObjects[2], webhookObjects[3], controllerDeployment),
					checkDeploymentAvailable(),
				),
			},
			{
				// The controller starts: it creates its certificate Secret
				// and patches the caBundle into the CRDs. Those fields are
				// the controller's; the plan must stay empty. The cluster
				// also has objects and a storage history, as a cluster that
				// once ran a v1alpha1-storing release would.
				PreConfig: func() {
					actAsV05Controller(t)
					markV1alpha1Stored(t)
					sandboxUID = createSandbox(t, ns, "survivor")
				},
				Config: configRelease(rs.URL, "v0.5.6"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Upgrade in place.
				PreConfig: func() {
					upgradeStart = time.Now()
					kube.ResetRequestCounts()
				},
				Config: configRelease(rs.URL, "v1.0.3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("id"), knownvalue.StringExact(controllerNS+"/v1.0.3")),
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(12)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						var total int64
						for _, n := range kube.RequestCounts() {
							total += n
						}
						t.Logf("upgrade v0.5.6 → v1.0.3 (plan, apply, refresh) took %s and %d Kubernetes requests: %v",
							time.Since(upgradeStart).Round(time.Millisecond), total, kube.RequestCounts())
						return nil
					},
					checkGone(webhookObjects...),
					checkCRDVersions([]string{"v1beta1"}, "None", []string{"v1beta1"}),
					checkSandboxSurvived(ns, "survivor", &sandboxUID),
					checkImage("registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3"),
					checkDeploymentAvailable(),
				),
			},
			{
				// A refresh costs one GET per inventory object and nothing
				// else: no discovery, no LIST, no write.
				PreConfig: kube.ResetRequestCounts,
				Config:    configRelease(rs.URL, "v1.0.3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan(), expectRefreshCost(t, 12)},
				},
			},
		},
	})
}

// TestAccController_twoFileReleaseV050ThenV103 installs v0.5.0, whose
// release has the two assets of the releases up to v0.5.1 (manifest.yaml,
// then extensions.yaml, whose controller Deployment replaces the core
// one), and upgrades it to v1.0.3.
func TestAccController_twoFileReleaseV050ThenV103(t *testing.T) {
	rs := newReleaseServer(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: configRelease(rs.URL, "v0.5.0"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("id"), knownvalue.StringExact(controllerNS+"/v0.5.0")),
					// The same 15 objects as v0.5.6's all-in-one asset.
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(15)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						rs.mu.Lock()
						defer rs.mu.Unlock()
						for _, p := range rs.served {
							if p != "/v0.5.0/manifest.yaml" && p != "/v0.5.0/extensions.yaml" {
								return fmt.Errorf("the release server was asked for %s", p)
							}
						}
						if !slices.Contains(rs.served, "/v0.5.0/manifest.yaml") || !slices.Contains(rs.served, "/v0.5.0/extensions.yaml") {
							return fmt.Errorf("served %v, want both v0.5.0 assets", rs.served)
						}
						return nil
					},
					checkCRDVersions([]string{"v1alpha1", "v1beta1"}, "Webhook", []string{"v1beta1"}),
					checkExists(webhookObjects[0], webhookObjects[2], webhookObjects[3]),
					checkImage("registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.0"),
					// extensions.yaml's Deployment won: --extensions, the
					// agent-sandbox-config mount, and (v0.5.0's
					// extensions.controller.yaml) no webhook port.
					func(*terraform.State) error {
						dep, err := mustGet(context.Background(), controllerDeployment)
						if err != nil {
							return err
						}
						podSpec, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
						c := podSpec["containers"].([]any)[0].(map[string]any)
						if got := fmt.Sprint(c["args"]); got != "[--leader-elect=true --extensions]" {
							return fmt.Errorf("args = %s", got)
						}
						if got := fmt.Sprint(c["volumeMounts"]); got != "[map[mountPath:/etc/sandbox-config name:config-volume readOnly:true]]" {
							return fmt.Errorf("volumeMounts = %s", got)
						}
						if got := fmt.Sprint(c["ports"]); strings.Contains(got, "9443") {
							return fmt.Errorf("ports = %s: the core Deployment's webhook port survived", got)
						}
						return nil
					},
					checkDeploymentAvailable(),
				),
			},
			{
				Config: configRelease(rs.URL, "v1.0.3"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(12)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGone(webhookObjects...),
					checkCRDVersions([]string{"v1beta1"}, "None", []string{"v1beta1"}),
					checkImage("registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3"),
					checkDeploymentAvailable(),
				),
			},
		},
	})
}

// TestAccController_caBundleByAnotherManagerLeavesPlanEmpty: fields a
// controller writes into the CRDs at run time are not drift.
func TestAccController_caBundleByAnotherManagerLeavesPlanEmpty(t *testing.T) {
	rs := newReleaseServer(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: configRelease(rs.URL, "v0.5.6")},
			{
				PreConfig: func() { actAsV05Controller(t) },
				Config:    configRelease(rs.URL, "v0.5.6"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Leave the CRDs as the other packages expect them.
				Config: configRelease(rs.URL, "v1.0.3"),
				Check:  checkCRDVersions([]string{"v1beta1"}, "None", []string{"v1beta1"}),
			},
		},
	})
}

// TestAccController_drift: an inventory object deleted or changed outside
// Terraform shows in the plan, and apply repairs it.
func TestAccController_drift(t *testing.T) {
	rs := newReleaseServer(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: configRelease(rs.URL, "v1.0.3")},
			{
				// Someone deletes the controller Deployment: the plan shows
				// the inventory entry to be re-applied, and apply repairs.
				PreConfig: func() { acctest.Delete(t, controllerDeployment) },
				Config:    configRelease(rs.URL, "v1.0.3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(deploymentKey).AtMapKey("digest")),
						plancheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(serviceKey).AtMapKey("digest"), knownvalue.NotNull()),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkExists(controllerDeployment), checkDeploymentAvailable()),
			},
			{
				// Someone edits the controller's image (kubectl edit / set
				// image): that changes a field this provider owns.
				PreConfig: func() {
					acctest.Patch(t, controllerDeployment, types.StrategicMergePatchType,
						`{"spec":{"template":{"spec":{"containers":[{"name":"agent-sandbox-controller","image":"example.com/evil:latest"}]}}}}`)
				},
				Config: configRelease(rs.URL, "v1.0.3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(deploymentKey).AtMapKey("digest")),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkImage("registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3"),
					checkDeploymentAvailable(),
				),
			},
		},
	})
}

// TestAccController_imageRegistryAndControllerSettings checks the applied
// Deployment: every image rewritten, and the controller settings.
func TestAccController_imageRegistryAndControllerSettings(t *testing.T) {
	rs := newReleaseServer(t)
	settings := `
  image_registry = "mirror.internal.example:5000/k8s"
  controller = {
    args          = ["--kube-api-qps=80", "--leader-elect=false"]
    replicas      = 2
    resources     = { requests = { cpu = "50m", memory = "64Mi" }, limits = { memory = "256Mi" } }
    node_selector = { "cloud.google.com/gke-nodepool" = "system-pool" }
    tolerations   = [{ key = "dedicated", operator = "Equal", value = "system", effect = "NoSchedule" }]
  }`
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: configRelease(rs.URL, "v1.0.3", settings),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkImage("mirror.internal.example:5000/k8s/agent-sandbox/agent-sandbox-controller:v1.0.3"),
				checkDeploymentAvailable(),
				func(*terraform.State) error {
					dep, err := mustGet(context.Background(), controllerDeployment)
					if err != nil {
						return err
					}
					if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 2 {
						return fmt.Errorf("replicas = %d, want 2", r)
					}
					podSpec, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
					c := podSpec["containers"].([]any)[0].(map[string]any)
					args := fmt.Sprint(c["args"])
					if args != "[--leader-elect=false --extensions --kube-api-qps=80]" {
						return fmt.Errorf("args = %s", args)
					}
					if got := fmt.Sprint(c["resources"]); got != "map[limits:map[memory:256Mi] requests:map[cpu:50m memory:64Mi]]" {
						return fmt.Errorf("resources = %s", got)
					}
					if got := fmt.Sprint(podSpec["nodeSelector"]); got != "map[cloud.google.com/gke-nodepool:system-pool]" {
						return fmt.Errorf("nodeSelector = %s", got)
					}
					if got := fmt.Sprint(podSpec["tolerations"]); got != "[map[effect:NoSchedule key:dedicated operator:Equal value:system]]" {
						return fmt.Errorf("tolerations = %s", got)
					}
					return nil
				},
			),
		}},
	})
}

// TestAccController_wrongChecksumRefusedBeforeAnyRequest: a manifest that
// is not the pinned one never reaches the cluster, whether the checksum is
// known while planning or only during apply.
func TestAccController_wrongChecksumRefusedBeforeAnyRequest(t *testing.T) {
	rs := newReleaseServer(t)
	wrong := strings.Repeat("0", 64)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig:   kube.ResetRequestCounts,
				Config:      configRelease(rs.URL, "v1.0.3", fmt.Sprintf("  manifest_sha256 = %q", wrong)),
				ExpectError: regexp.MustCompile(`Manifest checksum mismatch[\s\S]*has\s+SHA-256\s+[0-9a-f]{64},\s+but\s+manifest_sha256\s+is\s+0{64}`),
			},
			{
				// The checksum is unknown while planning (it comes from
				// another resource), so only Create can check it.
				PreConfig: func() {
					if n := kube.RequestCount(); n != 0 {
						t.Errorf("the refused plan sent %d Kubernetes request(s): %v", n, kube.RequestCounts())
					}
				},
				Config: acctest.ConfigCompose(`
resource "terraform_data" "sha" {
  input = "`+wrong+`"
}
`, configRelease(rs.URL, "v1.0.3", "  manifest_sha256 = terraform_data.sha.output")),
				ExpectError: regexp.MustCompile(`Manifest checksum mismatch`),
			},
			{
				PreConfig: func() {
					if w := writeRequests(); len(w) != 0 {
						t.Errorf("the refused apply sent write requests: %v", w)
					}
					if n := kube.RequestCount(); n != 0 {
						t.Errorf("the refused apply sent %d Kubernetes request(s): %v", n, kube.RequestCounts())
					}
				},
				// terraform_data was created before the refusal; keep it.
				Config:   acctest.ConfigCompose(acctest.ProviderConfig(), `resource "terraform_data" "sha" { input = "`+wrong+`" }`),
				PlanOnly: true,
			},
		},
	})
}

// TestAccController_sourceErrorsNameTheSource: download and parse errors
// say where the manifest came from and which document is wrong.
func TestAccController_sourceErrorsNameTheSource(t *testing.T) {
	rs := newReleaseServer(t)
	rs.add("/v9.9.9/sandbox-with-extensions.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\n# second\napiVersion: v1\nkind: ConfigMap\nmetadata: [broken\n"))
	controller.SetFetchBackoff(t, 20*time.Millisecond)
	unreachable := "http://127.0.0.1:1/sandbox-with-extensions.yaml"
	inline := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: x\n---\nkind: Service\nmetadata:\n  name: s\n"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version      = "v1.0.3"
  manifest_url = %q
}`, unreachable)),
				ExpectError: regexp.MustCompile(`Cannot download the agent-sandbox manifest[\s\S]*GET\s+` + regexp.QuoteMeta(unreachable)),
			},
			{
				Config:      configRelease(rs.URL, "v9.9.9"),
				ExpectError: regexp.MustCompile(`Invalid agent-sandbox manifest[\s\S]*/v9\.9\.9/sandbox-with-extensions\.yaml,\s+document\s+2\s+\(line\s+7\):\s+not\s+valid\s+YAML:\s+line\s+9:`),
			},
			{
				Config:      configRelease(rs.URL, "v9.9.8"),
				ExpectError: regexp.MustCompile(`404\s+Not\s+Found[\s\S]*release\s+v9\.9\.8\s+has\s+no\s+such\s+asset`),
			},
			{
				Config: acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version  = "v1.0.3"
  manifest = %s
}`, acctest.HCLString(inline))),
				ExpectError: regexp.MustCompile(`the\s+inline\s+manifest,\s+document\s+3\s+\(line\s+12\):\s+apiVersion\s+is\s+missing`),
			},
		},
	})
}

// TestAccController_import imports an installation by namespace/version;
// the first apply afterwards adopts the objects and records the inventory.
func TestAccController_import(t *testing.T) {
	rs := newReleaseServer(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: configRelease(rs.URL, "v1.0.3")},
			{
				Config:                  configRelease(rs.URL, "v1.0.3"),
				ResourceName:            resourceAddr,
				ImportState:             true,
				ImportStateId:           controllerNS + "/v1.0.3",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"inventory", "applied_manifest_sha256", "release_base_url"},
			},
			{
				Config:        configRelease(rs.URL, "v1.0.3"),
				ResourceName:  resourceAddr,
				ImportState:   true,
				ImportStateId: "no-such-namespace/v1.0.3",
				ExpectError:   regexp.MustCompile(`Cannot import non-existent remote object`),
			},
			{
				Config:        configRelease(rs.URL, "v1.0.3"),
				ResourceName:  resourceAddr,
				ImportState:   true,
				ImportStateId: "v1.0.3",
				ExpectError:   regexp.MustCompile(`Expected <namespace>/<version>`),
			},
		},
	})
}

// TestAccController_refusesBesideGKEAddon: an agent-sandbox CRD labelled by
// GKE's add-on manager means the managed add-on runs here.
func TestAccController_refusesBesideGKEAddon(t *testing.T) {
	rs := newReleaseServer(t)
	crd := acctest.ObjectRef{GVR: crdGVR, Name: sandboxCRDs[0]}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				acctest.Patch(t, crd, types.MergePatchType, `{"metadata":{"labels":{"addonmanager.kubernetes.io/mode":"Reconcile"}}}`)
				t.Cleanup(func() {
					if _, err := acctest.Dynamic(t).Resource(crdGVR).Patch(context.Background(), crd.Name, types.MergePatchType,
						[]byte(`{"metadata":{"labels":{"addonmanager.kubernetes.io/mode":null}}}`), metav1.PatchOptions{}); err != nil {
						t.Errorf("removing the add-on label from %s: %v", crd.Name, err)
					}
				})
				kube.ResetRequestCounts()
			},
			Config:      configRelease(rs.URL, "v1.0.3"),
			ExpectError: regexp.MustCompile(`GKE's managed Agent Sandbox add-on is enabled on this cluster[\s\S]*addonmanager\.kubernetes\.io/mode=Reconcile`),
		}},
	})
	if w := writeRequests(); len(w) != 0 {
		t.Errorf("the refusal sent write requests: %v", w)
	}
}

// TestAccController_destroyRemovesCRDsWhenOptedIn uses a manifest of its
// own (a namespace, a CRD of a test-only group, a Deployment), because
// removing the agent-sandbox CRDs would delete every Sandbox of the other
// packages' tests running at the same time.
func TestAccController_destroyRemovesCRDsWhenOptedIn(t *testing.T) {
	ns := acctest.RandomName("ctrl-crds")
	group := acctest.RandomName("g") + ".acctest.agentsandbox.dev"
	crdName := "widgets." + group
	manifest := testManifest(ns, group)
	config := func(keep bool) string {
		return acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version              = "v0.0.1"
  manifest             = %s
  keep_crds_on_destroy = %t
}`, acctest.HCLString(manifest), keep))
	}
	crd := acctest.ObjectRef{GVR: crdGVR, Name: crdName}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(crd, acctest.ObjectRef{GVR: namespaceGVR, Name: ns}),
		Steps: []resource.TestStep{
			{
				Config: config(true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(ns)),
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(4)),
				},
				Check: checkExists(crd, acctest.ObjectRef{GVR: deploymentGVR, Namespace: ns, Name: "widget-controller"}),
			},
			{
				// Opting in changes no object: nothing is applied.
				PreConfig: kube.ResetRequestCounts,
				Config:    config(false),
				Check: func(*terraform.State) error {
					if w := writeRequests(); len(w) != 0 {
						return fmt.Errorf("changing keep_crds_on_destroy sent write requests: %v", w)
					}
					return nil
				},
			},
		},
	})
}

func testManifest(ns, group string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[2]s
spec:
  group: %[2]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: widget-controller
  namespace: %[1]s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: widget-controller
  namespace: %[1]s
spec:
  replicas: 1
  selector: {matchLabels: {app: widget-controller}}
  template:
    metadata: {labels: {app: widget-controller}}
    spec:
      serviceAccountName: widget-controller
      containers:
      - name: controller
        image: example.com/widget-controller:v0.0.1
`, ns, group)
}

// TestAccController_waitTimeoutNamesTheObject: when the controller can not
// become available, apply fails at the resource's timeout naming the
// Deployment and why, and the objects it applied stay in state so that
// destroy removes them.
func TestAccController_waitTimeoutNamesTheObject(t *testing.T) {
	rs := newReleaseServer(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(controllerDeployment, acctest.ObjectRef{GVR: namespaceGVR, Name: controllerNS}),
		Steps: []resource.TestStep{{
			Config: configRelease(rs.URL, "v1.0.3", `
  controller = { node_selector = { "cloud.google.com/gke-nodepool" = "no-such-pool" } }
  timeouts {
    create = "30s"
  }`),
			// 30 s: the budget covers the CRD stage too, which on a v0.5.x
			// profile's cluster upgrades the CRDs to v1.0's shape (dropping
			// v1alpha1 and the conversion webhook) before the Deployment
			// wait this test is about; 10 s ran out there under load.
			ExpectError: regexp.MustCompile(`Timed out waiting for Deployment[\s\S]*Deployment\s+"agent-sandbox-system/agent-sandbox-controller":\s+0\s+of\s+1\s+replicas\s+available`),
		}},
	})
}

// destructiveVar opts in to TestAccController_destroyRemovesSandboxCRDs.
const destructiveVar = "AGENTSANDBOX_TEST_DESTRUCTIVE"

// TestAccController_destroyRemovesSandboxCRDs destroys a real release with
// keep_crds_on_destroy = false: the agent-sandbox CRDs, and every Sandbox
// with them, are deleted. Other packages' tests use those CRDs at the same
// time, so it only runs when asked (AGENTSANDBOX_TEST_DESTRUCTIVE=1, on a
// cluster nothing else uses) and re-installs the harness CRDs afterwards.
func TestAccController_destroyRemovesSandboxCRDs(t *testing.T) {
	if os.Getenv(destructiveVar) != "1" {
		t.Skipf("deletes the agent-sandbox CRDs every other test uses; set %s=1 to run it alone against its own cluster", destructiveVar)
	}
	rs := newReleaseServer(t)
	ns := acctest.Namespace(t)
	t.Cleanup(func() {
		crds, err := testenv.SandboxCRDs()
		if err == nil {
			err = testenv.InstallCRDs(context.Background(), acctest.RESTConfig(t), crds)
		}
		if err != nil {
			t.Errorf("re-installing the harness CRDs: %v", err)
		}
	})
	var uid types.UID
	crdRefs := make([]acctest.ObjectRef, 0, len(sandboxCRDs))
	for _, n := range sandboxCRDs {
		crdRefs = append(crdRefs, acctest.ObjectRef{GVR: crdGVR, Name: n})
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(append(crdRefs, acctest.ObjectRef{GVR: sandboxGVR, Namespace: ns, Name: "doomed"})...),
		Steps: []resource.TestStep{
			{Config: configRelease(rs.URL, "v1.0.3", "  keep_crds_on_destroy = false")},
			{
				PreConfig: func() { uid = createSandbox(t, ns, "doomed") },
				Config:    configRelease(rs.URL, "v1.0.3", "  keep_crds_on_destroy = false"),
				Check:     checkSandboxSurvived(ns, "doomed", &uid),
			},
		},
	})
}
