package sandboxtemplate_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_sandbox_template"}, DataSources: []string{"agentsandbox_sandbox_template"},
		Delegated: []pt.Delegation{
			{Attributes: map[string]any{"pod_template": podtemplate.Attribute()}, By: "internal/podtemplate"},
			{Prefix: "network_policy", Attributes: netrules.Attributes(), By: "internal/resources/networkpolicy"},
			{Attributes: map[string]any{"volume_claim_templates": blueprint.VolumeClaimTemplatesAttribute("")}, By: "internal/resources/sandbox"},
		},
		Sources: []string{"."}}.Check)
}

var fam = acctest.Family{ResourceType: sandboxtemplate.ResourceType, GVR: sandboxtemplate.Kind.GVR}

const address = sandboxtemplate.ResourceType + ".test"

var (
	gvr   = sandboxtemplate.Kind.GVR
	npGVR = networkingv1.SchemeGroupVersion.WithResource("networkpolicies")
)

// The walkthrough's python-analytics-template, as a user writes it with
// this provider: the hardening it spells out by hand (gVisor, no token,
// non-root, seccomp, no privilege escalation, capabilities dropped) comes
// from the defaults; only the user ID, the image, the port and the
// resources are left to say.
func testAccSandboxTemplateConfig_basic(ns, name string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    labels = {
      "app.kubernetes.io/component" = "execution-sandbox"
      "sandbox-tier"                = "untrusted-python"
    }
    security_context = { run_as_user = 10001 }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports = [{ container_port = 8888 }]
      resources = {
        requests = { cpu = "500m", memory = "1Gi", "ephemeral-storage" = "2Gi" }
        limits   = { cpu = "1000m", memory = "1Gi", "ephemeral-storage" = "2Gi" }
      }
    }]
  }
}
`, name, ns))
}

// containerNames checks the live pod template's containers.
func containerNames(want ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podTemplate", "spec", "containers")
		var got []string
		for _, c := range cs {
			got = append(got, fmt.Sprint(c.(map[string]any)["name"]))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("containers = %v, want %v", got, want)
		}
		return nil
	}
}

// managedPolicy checks the NetworkPolicy the release's controller keeps for
// a Managed template.
func managedPolicy(t *testing.T, ns, template string, check func(*unstructured.Unstructured) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ref := acctest.ObjectRef{GVR: npGVR, Namespace: ns, Name: sandboxapi.TemplateNetworkPolicyName(template)}
		var last error
		// The controller writes it asynchronously.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			obj, err := acctest.GetObject(context.Background(), ref)
			if err == nil {
				if last = check(obj); last == nil {
					return nil
				}
			} else {
				last = err
			}
			time.Sleep(200 * time.Millisecond)
		}
		return fmt.Errorf("%s: %w", ref, last)
	}
}

func TestAccSandboxTemplate_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("python-analytics")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: testAccSandboxTemplateConfig_basic(ns, name),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_template").AtMapKey("runtime_class_name"), knownvalue.StringExact("gvisor")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_template").AtMapKey("automount_service_account_token"), knownvalue.Bool(false)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy_management"), knownvalue.StringExact("Managed")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("env_vars_injection_policy"), knownvalue.StringExact("Disallowed")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("volume_claim_templates_policy"), knownvalue.StringExact("Disallowed")),
			// Unset: nothing sent, the controller creates no Service.
			statecheck.ExpectKnownValue(address, tfjsonpath.New("service"), knownvalue.Null()),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy"), knownvalue.Null()),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy_rendered"), knownvalue.Null()),
			// What the API server accepted and stores is the hardened pod.
			acctest.ExpectObject(address, gvr,
				acctest.Field("gvisor", "spec", "podTemplate", "spec", "runtimeClassName"),
				acctest.Field(false, "spec", "podTemplate", "spec", "automountServiceAccountToken"),
				acctest.Field(true, "spec", "podTemplate", "spec", "securityContext", "runAsNonRoot"),
				acctest.Field(10001, "spec", "podTemplate", "spec", "securityContext", "runAsUser"),
				acctest.Field("RuntimeDefault", "spec", "podTemplate", "spec", "securityContext", "seccompProfile", "type"),
				acctest.Field("Managed", "spec", "networkPolicyManagement"),
				acctest.Absent("spec", "networkPolicy"),
			),
		},
		Check: resource.ComposeTestCheckFunc(
			// Managed (the default): the controller keeps its default policy.
			managedPolicy(t, ns, name, acctest.Mentions("agent-sandbox-system", "spec", "ingress")),
		),
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
	}))
}

// testAccSandboxTemplateConfig_full sets every attribute the resource has.
func testAccSandboxTemplateConfig_full(ns, name string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "test" {
  name        = %[1]q
  namespace   = %[2]q
  labels      = { team = "ml" }
  annotations = { "example.com/owner" = "platform" }
  pod_template = {
    labels      = { "app.kubernetes.io/component" = "execution-sandbox" }
    tolerations = [{ key = "sandbox.gke.io/runtime", operator = "Equal", value = "gvisor", effect = "NoSchedule" }]
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      env   = [{ name = "MODE", value = "analytics" }]
      ports = [{ container_port = 8888 }]
      volume_mounts = [{ name = "workspace", mount_path = "/workspace" }]
      resources = {
        requests = { cpu = "250m", memory = "512Mi" }
        limits   = { cpu = "1", memory = "1Gi" }
      }
    }]
  }
  volume_claim_templates = [{
    name               = "workspace"
    labels             = { data = "scratch" }
    storage_class_name = "standard"
    resources          = { requests = { storage = "1Gi" } }
  }]
  service = true
  network_policy = {
    allow_dns    = true
    allow_egress = [{ cidr = "0.0.0.0/0", except = ["10.0.0.0/8"], ports = [{ port = 443 }] }]
  }
  env_vars_injection_policy     = "Allowed"
  volume_claim_templates_policy = "Overrides"
}
`, name, ns))
}

func testAccSandboxTemplateConfig_unmanaged(ns, name string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    containers = [{
      name      = "python-runtime"
      image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.2.0"
      resources = { limits = { cpu = "1", memory = "1Gi" } }
    }]
  }
  network_policy_management = "Unmanaged"
}

# The stricter alternative to the managed policy.
resource "agentsandbox_network_policy" "isolate" {
  name      = "%[1]s-isolate"
  namespace = %[2]q
  template  = agentsandbox_sandbox_template.test.name
}
`, name, ns))
}

func TestAccSandboxTemplate_update(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("tmpl")
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           testAccSandboxTemplateConfig_basic(ns, name),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config: testAccSandboxTemplateConfig_full(ns, name),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("volume_claim_templates").AtSliceIndex(0).AtMapKey("access_modes"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("ReadWriteOnce")})),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy").AtMapKey("block_metadata_server"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy_rendered"), knownvalue.StringRegexp(regexp.MustCompile(`"169.254.169.254/32"`))),
				acctest.ExpectObject(address, gvr,
					acctest.Field(true, "spec", "service"),
					acctest.Field("Allowed", "spec", "envVarsInjectionPolicy"),
					acctest.Field("Overrides", "spec", "volumeClaimTemplatesPolicy"),
					acctest.Mentions("1Gi", "spec", "volumeClaimTemplates"),
				),
			},
			// The controller renders exactly the template's rules: DNS, then
			// 443 to the internet minus 10/8 and the metadata server.
			Check: managedPolicy(t, ns, name, func(np *unstructured.Unstructured) error {
				eg, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
				if len(eg) != 2 || !strings.Contains(fmt.Sprint(eg[1]), "169.254.169.254/32") || !strings.Contains(fmt.Sprint(eg[1]), "443") {
					return fmt.Errorf("egress = %v", eg)
				}
				return nil
			}),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
		resource.TestStep{
			Config: testAccSandboxTemplateConfig_unmanaged(ns, name),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("volume_claim_templates"), knownvalue.Null()),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("network_policy_rendered"), knownvalue.Null()),
				// service no longer set: the field is given up, not set to false.
				statecheck.ExpectKnownValue(address, tfjsonpath.New("service"), knownvalue.Null()),
				acctest.ExpectObject(address, gvr,
					acctest.Absent("spec", "service"),
					acctest.Field("Unmanaged", "spec", "networkPolicyManagement"),
					acctest.Absent("spec", "networkPolicy"),
					acctest.Absent("spec", "volumeClaimTemplates"),
					acctest.Absent("spec", "podTemplate", "spec", "tolerations"),
					acctest.Absent("metadata", "labels", "team"),
				),
			},
			// Unmanaged: the controller removes its policy.
			Check: func(*terraform.State) error {
				ref := acctest.ObjectRef{GVR: npGVR, Namespace: ns, Name: sandboxapi.TemplateNetworkPolicyName(name)}
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if _, err := acctest.GetObject(context.Background(), ref); apierrors.IsNotFound(err) {
						return nil
					}
					time.Sleep(200 * time.Millisecond)
				}
				return fmt.Errorf("%s still exists for an Unmanaged template", ref)
			},
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
	))
}

func TestAccSandboxTemplate_replace(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("tmpl")
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: testAccSandboxTemplateConfig_basic(ns, name), ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			// The name is the identity: a new name is a new template.
			Config:           testAccSandboxTemplateConfig_basic(ns, name+"-v2"),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			Check: func(*terraform.State) error {
				_, err := acctest.GetObject(context.Background(), acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("the old template is still there (%w)", err)
				}
				return nil
			},
		},
	))
}

func TestAccSandboxTemplate_import(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("tmpl")
	cfg := testAccSandboxTemplateConfig_full(ns, name)
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			Config:            cfg,
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true,
		},
		resource.TestStep{
			Config:        cfg,
			ResourceName:  address,
			ImportState:   true,
			ImportStateId: ns + "/" + name + "/x",
			ExpectError:   regexp.MustCompile(`not of\s+the form <namespace>/<name>`),
		},
	))
}

func TestAccSandboxTemplate_disappears(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("gone")
	cfg := testAccSandboxTemplateConfig_basic(ns, name)
	// Deleted out of band: the plan creates it again.
	resource.Test(t, fam.Case(t, fam.Disappears(cfg)...))
}

func TestAccSandboxTemplate_drift(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("drift")
	cfg := testAccSandboxTemplateConfig_full(ns, name)
	ref := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			// Someone adds a container, an env variable and a toleration
			// (fields the provider never set, owned by another manager),
			// and changes the image the provider set.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.JSONPatchType, `[
				  {"op": "add", "path": "/spec/podTemplate/spec/containers/-", "value": {"name": "miner", "image": "evil:1"}},
				  {"op": "add", "path": "/spec/podTemplate/spec/containers/0/env/-", "value": {"name": "DEBUG", "value": "1"}},
				  {"op": "add", "path": "/spec/podTemplate/spec/tolerations/-", "value": {"operator": "Exists"}},
				  {"op": "replace", "path": "/spec/podTemplate/spec/containers/0/image", "value": "python:latest"}
				]`)
			},
			Config:           cfg,
			ConfigPlanChecks: fam.DriftRepaired("miner", "evil:1", "DEBUG", "python:latest", "operator:Exists"),
			ConfigStateChecks: []statecheck.StateCheck{acctest.ExpectObject(address, gvr,
				containerNames("python-runtime"),
				acctest.Mentions("python-runtime-sandbox:v0.1.0", "spec", "podTemplate", "spec", "containers"),
				func(obj *unstructured.Unstructured) error {
					s := fmt.Sprint(obj.Object["spec"])
					if strings.Contains(s, "DEBUG") || strings.Contains(s, "operator:Exists") {
						return fmt.Errorf("out-of-band additions survived the apply: %s", s)
					}
					return nil
				},
			)},
		},
		resource.TestStep{
			// The network policy rules are opened, the service switched off,
			// the policies loosened and a claim template added.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"spec": {
				  "networkPolicy": {"ingress": [{}], "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]},
				  "service": false,
				  "envVarsInjectionPolicy": "Overrides"
				}}`)
			},
			Config:           cfg,
			ConfigPlanChecks: fam.DriftRepaired(`"cidr": "0.0.0.0/0"`, "service:false", "env_vars_injection_policy:Overrides"),
			ConfigStateChecks: []statecheck.StateCheck{acctest.ExpectObject(address, gvr,
				acctest.Field(true, "spec", "service"),
				acctest.Field("Allowed", "spec", "envVarsInjectionPolicy"),
			)},
		},
		resource.TestStep{
			// Additions under fields the provider set as empty: pod template
			// keys the configuration does not use.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"spec": {"podTemplate": {"spec": {"hostNetwork": true, "nodeSelector": {"pool": "default"}}}}}`)
			},
			Config: cfg,
			// hostNetwork is not modelled by the typed schema: it shows up
			// in pod_spec_overrides, which the configuration does not set.
			ConfigPlanChecks: fam.DriftRepaired("pool:default", `pod_spec_overrides:{"hostNetwork":true}`),
			ConfigStateChecks: []statecheck.StateCheck{acctest.ExpectObject(address, gvr,
				acctest.Absent("spec", "podTemplate", "spec", "nodeSelector"),
				acctest.Absent("spec", "podTemplate", "spec", "hostNetwork"),
			)},
		},
	))
}

// TestAccSandboxTemplate_refreshCost measures what a refresh of unchanged
// templates costs: exactly one GET each.
func TestAccSandboxTemplate_refreshCost(t *testing.T) {
	const n = 5
	ns := acctest.Namespace(t)
	name := acctest.RandomName("cost")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "test" {
  count     = %[3]d
  name      = "%[1]s-${count.index}"
  namespace = %[2]q
  pod_template = {
    containers = [{ name = "main", image = "python:3.13", resources = { limits = { cpu = "1", memory = "1Gi" } } }]
  }
}
`, name, ns, n))
	cost := acctest.NewRequestCost(t, n, "templates")
	resource.Test(t, fam.Case(t,
		cost.CreateStep(cfg, "create"),
		cost.RefreshStep("GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxtemplates/{name}", 0),
	))
}
