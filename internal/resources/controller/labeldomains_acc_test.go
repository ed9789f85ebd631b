package controller_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// allowed_label_domains (issue 16 item 6). The controller reads its
// ConfigMap only when it starts, so every change must roll the Deployment.
//
// The ConfigMap in agent-sandbox-system belongs, in the shared test
// cluster, to this package's tests (they install and destroy the controller
// there, one after another). Every domain list here keeps sandbox.users.io,
// the default, so that the other packages' claims, which use it and run at
// the same time, stay valid while a test's ConfigMap is in effect. The test
// that a real controller honours the domains (claimLabelDomains) runs on a
// cluster of its own, whose controller it restarts.

var (
	configMapGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	sandboxConfig = acctest.ObjectRef{GVR: configMapGVR, Namespace: controllerNS, Name: sandboxapi.ConfigMapName}
	// sandboxConfigKey is the ConfigMap's inventory key.
	sandboxConfigKey = "ConfigMap/" + controllerNS + "/" + sandboxapi.ConfigMapName
)

const sandboxConfigAnnotation = "agentsandbox.dev/sandbox-config-sha256"

// domainsAttr is the allowed_label_domains line of a configuration.
func domainsAttr(domains ...string) string {
	list := ""
	for i, d := range domains {
		if i > 0 {
			list += ", "
		}
		list += fmt.Sprintf("%q", d)
	}
	return "  allowed_label_domains = [" + list + "]"
}

// rollout follows the controller Deployment's generation across steps: each
// check says whether the pod template changed since the last one.
type rollout struct{ generation int64 }

// check records the Deployment's generation, failing when it moved
// (rolled) other than as want says.
func (r *rollout) check(want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		dep, err := mustGet(context.Background(), controllerDeployment)
		if err != nil {
			return err
		}
		g := dep.GetGeneration()
		prev := r.generation
		r.generation = g
		switch {
		case prev == 0:
		case want && g == prev:
			return fmt.Errorf("the controller Deployment was not rolled (generation still %d): the controller would keep the domains it read at start", g)
		case !want && g != prev:
			return fmt.Errorf("the controller Deployment was rolled (generation %d -> %d) although the domains did not change", prev, g)
		}
		return nil
	}
}

// checkSandboxConfig checks the ConfigMap's value and the Deployment's
// digest of it; with value "" that neither exists.
func checkSandboxConfig(value string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		dep, err := mustGet(ctx, controllerDeployment)
		if err != nil {
			return err
		}
		annotation, found, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "annotations", sandboxConfigAnnotation)
		if value == "" {
			if found {
				return fmt.Errorf("the Deployment's pod template still has %s=%s", sandboxConfigAnnotation, annotation)
			}
			return checkGone(sandboxConfig)(nil)
		}
		cm, err := mustGet(ctx, sandboxConfig)
		if err != nil {
			return err
		}
		got, _, _ := unstructured.NestedString(cm.Object, "data", sandboxapi.ConfigKeyAllowedLabelDomains)
		if got != value {
			return fmt.Errorf("%s: %s = %q, want %q", sandboxConfig, sandboxapi.ConfigKeyAllowedLabelDomains, got, value)
		}
		sum := sha256.Sum256([]byte(value))
		if annotation != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("the Deployment's pod template has %s=%q, want the SHA-256 of %q", sandboxConfigAnnotation, annotation, value)
		}
		return nil
	}
}

// TestAccController_allowedLabelDomains is the lifecycle of the ConfigMap:
// created with the controller, changed in place (rolling the controller),
// repaired after an out-of-band deletion, imported, and removed.
func TestAccController_allowedLabelDomains(t *testing.T) {
	rs := newReleaseServer(t)
	two := domainsAttr("sandbox.users.io", "agents.example.com")
	three := domainsAttr("sandbox.users.io", "agents.example.com", "tools.example.org")
	var r rollout
	var uid string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(controllerDeployment, sandboxConfig),
		Steps: []resource.TestStep{
			{
				Config:           configRelease(rs.URL, "v1.0.3", two),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(sandboxConfigKey).AtMapKey("kind"), knownvalue.StringExact("ConfigMap")),
					statecheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("allowed_label_domains"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("sandbox.users.io"), knownvalue.StringExact("agents.example.com")})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSandboxConfig("agents.example.com,sandbox.users.io"),
					checkDeploymentAvailable(),
					r.check(false),
					func(*terraform.State) error {
						cm, err := mustGet(context.Background(), sandboxConfig)
						if err == nil {
							uid = string(cm.GetUID())
						}
						return err
					},
				),
			},
			{
				// The same set in another order is no change at all.
				Config:   configRelease(rs.URL, "v1.0.3", domainsAttr("agents.example.com", "sandbox.users.io")),
				PlanOnly: true,
			},
			{
				// A third domain: an in-place update of the ConfigMap, and a
				// rollout so that the controller reads it.
				Config: configRelease(rs.URL, "v1.0.3", three),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(sandboxConfigKey).AtMapKey("digest")),
						plancheck.ExpectUnknownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(deploymentKey).AtMapKey("digest")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSandboxConfig("agents.example.com,sandbox.users.io,tools.example.org"),
					checkDeploymentAvailable(),
					r.check(true),
					func(*terraform.State) error {
						cm, err := mustGet(context.Background(), sandboxConfig)
						if err == nil && string(cm.GetUID()) != uid {
							return fmt.Errorf("the ConfigMap was recreated (uid %s, was %s), not updated", cm.GetUID(), uid)
						}
						return err
					},
				),
			},
			{
				// Deleted outside Terraform: the plan shows it, apply puts
				// it back. The pod template did not change, so no rollout.
				PreConfig: func() { acctest.Delete(t, sandboxConfig) },
				Config:    configRelease(rs.URL, "v1.0.3", three),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(sandboxConfigKey).AtMapKey("digest")),
						plancheck.ExpectKnownValue(resourceAddr, tfjsonpath.New("inventory").AtMapKey(deploymentKey).AtMapKey("digest"), knownvalue.NotNull()),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSandboxConfig("agents.example.com,sandbox.users.io,tools.example.org"),
					r.check(false),
				),
			},
			{
				// Import reads the domains from the ConfigMap.
				Config:                  configRelease(rs.URL, "v1.0.3", three),
				ResourceName:            resourceAddr,
				ImportState:             true,
				ImportStateId:           controllerNS + "/v1.0.3",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"inventory", "applied_manifest_sha256", "release_base_url"},
			},
			{
				// Removed: the ConfigMap is deleted and the controller rolled
				// to start without it (the default domain again).
				Config: configRelease(rs.URL, "v1.0.3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkSandboxConfig(""),
					checkDeploymentAvailable(),
					r.check(true),
					resource.TestCheckNoResourceAttr(resourceAddr, "inventory."+sandboxConfigKey+".kind"),
					resource.TestCheckResourceAttr(resourceAddr, "inventory."+deploymentKey+".kind", "Deployment"),
				),
			},
		},
	})
}

// TestAccController_allowedLabelDomainsNeedTheMount: a controller that does
// not mount the ConfigMap would never read it, so the setting is refused
// before anything is sent: the release's core-only asset (upstream's
// k8s/controller.yaml mounts nothing), given as a file or chosen with
// extensions = false.
func TestAccController_allowedLabelDomainsNeedTheMount(t *testing.T) {
	core, err := bundles.Read("v1.0.3", bundles.AssetSandbox)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "sandbox.yaml")
	if err := os.WriteFile(file, core, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := newReleaseServer(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: acctest.RefusedAtPlan(t,
			acctest.BadConfig{
				Config: acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version               = "v1.0.3"
  manifest_file         = %q
  allowed_label_domains = ["sandbox.users.io", "agents.example.com"]
}
`, file)),
				Error: `(?s)Cannot configure the allowed label domains.*does not mount the ConfigMap\s+agent-sandbox-config at\s+/etc/sandbox-config`,
			},
			acctest.BadConfig{
				Config: configRelease(rs.URL, "v1.0.3", domainsAttr("agents.example.com"), "  extensions = false"),
				Error:  `(?s)allowed_label_domains needs the extensions.*extensions = false`,
			},
		),
	})
}

// TestAccController_claimLabelDomains: a claim's pod label in a domain the
// controller was given is planned, applied and accepted by upstream's real
// v1.0.3 controller; a label outside the controller's domains is refused at
// plan, at its attribute, before the claim is written; and once the domains
// are removed the restarted controller refuses a claim in the removed domain.
//
// The real controller reads /etc/sandbox-config/allowed-label-domains once,
// when it starts (cmd/agent-sandbox-controller/main.go:462 at v1.0.3), from
// the ConfigMap its Deployment mounts. Out of cluster, its pod's start is
// played by rolledOut: when the Deployment's pod template changed, the
// controller process is replaced by one that runs in a mount namespace of
// its own with the ConfigMap's content at /etc/sandbox-config, as the
// kubelet would mount it in the new pod. So the test runs on a cluster of
// its own (the package's shared controller must not restart under the
// other tests) and needs root (the mount namespace).
func TestAccController_claimLabelDomains(t *testing.T) {
	// On a cluster of its own: runs beside the package's other tests of
	// their own clusters (the package is otherwise serial).
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("runs the real controller in a mount namespace of its own (its ConfigMap at /etc/sandbox-config), which needs root")
	}
	c := acctest.StartOwnCluster(t, testenv.Options{
		Profile: &releases.V103,
		NoCRDs:  true,
		// The release's Deployment mounts the ConfigMap as optional: with
		// no ConfigMap the directory is there and empty.
		Controller:     testenv.RealControllerWith(releases.V103, "", testenv.RealControllerOptions{SandboxConfig: map[string]string{}}),
		ControllerWait: -1,
	})
	ctx := t.Context()
	rs := newReleaseServer(t)
	const ns = "default"
	ref := func(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
		return c.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}

	// rolledOut plays the controller pod's restart after a rollout: when
	// the Deployment's digest of the ConfigMap differs from what the
	// running process was started with, the process is replaced by one
	// that sees the ConfigMap's content at /etc/sandbox-config.
	started := ""
	rolledOut := func(*terraform.State) error {
		dep, err := ref(controllerDeployment.GVR, controllerDeployment.Namespace, controllerDeployment.Name)
		if err != nil {
			return err
		}
		digest, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "annotations", sandboxConfigAnnotation)
		if digest == started {
			return nil
		}
		files := map[string]string{}
		cm, err := ref(configMapGVR, controllerNS, sandboxapi.ConfigMapName)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		default:
			files, _, _ = unstructured.NestedStringMap(cm.Object, "data")
		}
		if err := c.ReplaceController(ctx, testenv.RealControllerWith(releases.V103, c.Root, testenv.RealControllerOptions{SandboxConfig: files})); err != nil {
			return fmt.Errorf("restarting the controller with /etc/sandbox-config = %v: %w", files, err)
		}
		t.Logf("controller restarted after the rollout with /etc/sandbox-config = %v", files)
		started = digest
		return nil
	}

	controllerAndPool := func(domains ...string) string {
		attr := ""
		if len(domains) > 0 {
			attr = domainsAttr(domains...)
		}
		return c.ProviderConfig() + fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version          = "v1.0.3"
  release_base_url = %[2]q
%[3]s
}

resource "agentsandbox_sandbox_template" "python" {
  name      = "python"
  namespace = %[1]q
  network_policy_management = "Unmanaged"
  pod_template = {
    containers = [{
      name      = "python"
      image     = "registry.example/python-runtime:1"
      resources = { limits = { cpu = "500m", memory = "256Mi" } }
    }]
  }
  depends_on = [agentsandbox_controller.test]
}

resource "agentsandbox_warm_pool" "p" {
  name      = "pool"
  namespace = %[1]q
  template  = agentsandbox_sandbox_template.python.name
  replicas  = 1
}
`, ns, rs.URL, attr)
	}
	claim := func(labels string) string {
		return fmt.Sprintf(`
resource "agentsandbox_sandbox_claim" "c" {
  name      = "session"
  namespace = %q
  warm_pool = agentsandbox_warm_pool.p.name
  additional_pod_metadata = {
    labels = { %s }
  }
}
`, ns, labels)
	}
	domains := []string{"sandbox.users.io", "agents.example.com"}
	accepted := `"team.agents.example.com/owner" = "alice", "sandbox.users.io/session" = "s1"`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The controller with the domains: the ConfigMap is
				// written, the Deployment rolled, the controller restarted
				// with the file its pod would mount.
				Config:           controllerAndPool(domains...),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            rolledOut,
			},
			{
				// A claim with a label in a custom domain: the real
				// controller accepts it (Ready) and gives the label to the
				// claim's sandbox.
				Config:           controllerAndPool(domains...) + claim(accepted),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("agentsandbox_sandbox_claim.c", tfjsonpath.New("ready"), knownvalue.Bool(true)),
				},
				Check: func(*terraform.State) error {
					cl, err := ref(claimGVR, ns, "session")
					if err != nil {
						return err
					}
					name, _, _ := unstructured.NestedString(cl.Object, "status", "sandbox", "name")
					sb, err := ref(sandboxGVR, ns, name)
					if err != nil {
						return fmt.Errorf("the claim's sandbox %q: %w", name, err)
					}
					labels, _, _ := unstructured.NestedStringMap(sb.Object, "spec", "podTemplate", "metadata", "labels")
					if labels["team.agents.example.com/owner"] != "alice" {
						return fmt.Errorf("sandbox %s has pod labels %v, without the claim's team.agents.example.com/owner=alice", name, labels)
					}
					return nil
				},
			},
			{
				// Through the plugin protocol, to see the attribute paths.
				PreConfig:   func() { claimLabelsAtPlan(t, c.Kubeconfig, ns) },
				Config:      controllerAndPool(domains...) + claim(accepted+`, "other.example.org/x" = "y"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Pod label domain not allowed by the controller.*"other\.example\.org/x".*agents\.example\.com,\s+sandbox\.users\.io`),
			},
			{
				// The domains removed (and the claim with them): the
				// ConfigMap is deleted and the Deployment rolled; the
				// restarted controller is back to the default domain and
				// refuses a claim in the removed one.
				Config:           controllerAndPool(),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						if _, err := ref(configMapGVR, controllerNS, sandboxapi.ConfigMapName); !apierrors.IsNotFound(err) {
							return fmt.Errorf("the ConfigMap %s after the domains were removed: %w (want it deleted)", sandboxapi.ConfigMapName, err)
						}
						return nil
					},
					rolledOut,
					func(*terraform.State) error {
						probe := &unstructured.Unstructured{Object: map[string]any{
							"apiVersion": "extensions.agents.x-k8s.io/v1beta1",
							"kind":       "SandboxClaim",
							"metadata":   map[string]any{"name": "probe", "namespace": ns},
							"spec": map[string]any{
								"warmPoolRef":           map[string]any{"name": "pool"},
								"additionalPodMetadata": map[string]any{"labels": map[string]any{"team.agents.example.com/owner": "bob"}},
							},
						}}
						if _, err := c.Dynamic.Resource(claimGVR).Namespace(ns).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
							return err
						}
						defer func() {
							_ = c.Dynamic.Resource(claimGVR).Namespace(ns).Delete(context.WithoutCancel(ctx), "probe", metav1.DeleteOptions{})
						}()
						last := "not read yet"
						for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
							cl, err := ref(claimGVR, ns, "probe")
							if err != nil {
								return err
							}
							conds, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
							last = "no Ready condition"
							for _, x := range conds {
								m, _ := x.(map[string]any)
								if m["type"] == "Ready" {
									if m["reason"] == "InvalidMetadata" {
										return nil
									}
									last = fmt.Sprintf("Ready=%v reason %v: %v", m["status"], m["reason"], m["message"])
								}
							}
						}
						return fmt.Errorf("the probe claim with label team.agents.example.com/owner was not refused (InvalidMetadata) within 30 s by the controller restarted without the domain: %s", last)
					},
				),
			},
		},
	})
}

var claimGVR = schema.GroupVersionResource{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxclaims"}

// claimLabelsAtPlan plans claims through the plugin protocol with a provider
// configured for the cluster at kubeconfig, whose controller allows sandbox.users.io
// and agents.example.com: each label outside them is refused at its path.
func claimLabelsAtPlan(t *testing.T, kubeconfig, ns string) {
	t.Helper()
	s := pt.New(t, provider.New("test"))
	if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{"kubernetes": map[string]any{"config_path": kubeconfig}})); len(errs) > 0 {
		t.Fatalf("configure: %s", pt.Describe(errs))
	}
	for _, tc := range []struct {
		label   string
		refused bool
	}{
		{"agents.example.com/owner", false},
		{"team.agents.example.com/owner", false},
		{"sandbox.users.io/session", false},
		{"other.example.org/x", true},
		{"example.com/x", true},          // the parent of an allowed domain
		{"myagents.example.com/x", true}, // a suffix that is no subdomain
	} {
		cfg := map[string]any{
			"name": "planned", "namespace": ns, "warm_pool": "pool",
			"additional_pod_metadata": map[string]any{"labels": map[string]any{tc.label: "v"}},
		}
		_, diags := s.Plan(t, "agentsandbox_sandbox_claim", cfg)
		errs := pt.Errors(diags)
		switch {
		case !tc.refused && len(errs) > 0:
			t.Errorf("label %s refused: %s", tc.label, pt.Describe(errs))
		case tc.refused:
			pt.ExpectErrorAt(t, diags, fmt.Sprintf("additional_pod_metadata.labels[%q]", tc.label),
				"not allowed by the controller", "agents.example.com, sandbox.users.io", "allowed_label_domains")
		}
	}
}
