package sandbox_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

func TestMain(m *testing.M) {
	acctest.Main(m, pt.Coverage{Provider: provider.New("test"), Resources: []string{"agentsandbox_sandbox"}, DataSources: []string{"agentsandbox_sandbox"},
		Delegated: []pt.Delegation{{Attributes: map[string]any{"pod_template": podtemplate.Attribute()}, By: "internal/podtemplate"}},
		Sources:   []string{".", "../../blueprint"}}.Check)
}

var fam = acctest.Family{ResourceType: sandbox.ResourceType, GVR: sandbox.Kind.GVR}

const address = sandbox.ResourceType + ".test"

var (
	gvr    = sandbox.Kind.GVR
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	svcGVR = corev1.SchemeGroupVersion.WithResource("services")
)

// sandboxConfig is a hardened Python sandbox; extra goes into the
// resource block.
func sandboxConfig(ns, name, extra string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports = [{ container_port = 8888 }]
      resources = {
        requests = { cpu = "250m", memory = "512Mi" }
        limits   = { cpu = "1000m", memory = "1Gi" }
      }
    }]
  }
%[3]s
}
`, name, ns, extra))
}

// exists and gone check objects the controller makes for a sandbox.
// exists waits (briefly) for the object: with wait_for_ready = false the
// apply can return before the controller has created it.
func exists(ref acctest.ObjectRef) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err = acctest.GetObject(context.Background(), ref); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%s: %w", ref, err)
	}
}

func eventuallyGone(ref acctest.ObjectRef) resource.TestCheckFunc {
	return func(*terraform.State) error {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := acctest.GetObject(context.Background(), ref); apierrors.IsNotFound(err) {
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return fmt.Errorf("%s still exists", ref)
	}
}

func TestAccSandbox_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("agent")
	var t0 time.Time
	resource.Test(t, fam.Case(t, resource.TestStep{
		PreConfig: func() { t0 = time.Now() },
		Config:    sandboxConfig(ns, name, `  service = true`),
		Check: func(s *terraform.State) error {
			// The apply waited for Ready: measured from the start of the
			// step (plan included) to its end.
			obj := acctest.Get(t, acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name})
			t.Logf("plan + create + wait for Ready took %s (sandbox created %s)", time.Since(t0).Round(time.Millisecond),
				obj.GetCreationTimestamp().Format(time.RFC3339))
			return nil
		},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("operating_mode"), knownvalue.StringExact("Running")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_policy"), knownvalue.StringExact("Retain")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("service_fqdn"), knownvalue.StringExact(name+"."+ns+".svc.cluster.local")),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_ips"), knownvalue.ListSizeExact(1)),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("node_name"), knownvalue.StringRegexp(regexp.MustCompile(`.+`))),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_template").AtMapKey("runtime_class_name"), knownvalue.StringExact("gvisor")),
			acctest.ExpectObject(address, gvr,
				acctest.Field("gvisor", "spec", "podTemplate", "spec", "runtimeClassName"),
				acctest.Field(false, "spec", "podTemplate", "spec", "automountServiceAccountToken"),
				acctest.Field(true, "spec", "service"),
				acctest.Field("Running", "spec", "operatingMode"),
				acctest.Field("Retain", "spec", "shutdownPolicy"),
			),
		},
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
	}))
}

// TestAccSandbox_update suspends and resumes a sandbox in place, waiting
// for the Suspended and then the Ready condition, and changes the rest of
// what can change without replacing it.
func TestAccSandbox_update(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("agent")
	pod := acctest.ObjectRef{GVR: podGVR, Namespace: ns, Name: name}
	svc := acctest.ObjectRef{GVR: svcGVR, Namespace: ns, Name: name}
	// With an offset: the API server stores UTC, and the configured
	// spelling must survive (an empty plan after the apply proves it).
	shutdown := time.Now().Add(24 * time.Hour).In(time.FixedZone("", 2*3600)).Truncate(time.Second).Format(time.RFC3339)
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           sandboxConfig(ns, name, `  service = true`),
			Check:            exists(pod),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config: sandboxConfig(ns, name, `
  service        = true
  operating_mode = "Suspended"
  labels         = { team = "ml" }
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_ips"), knownvalue.ListSizeExact(0)),
				// The Service, and so the stable name, stays while suspended.
				statecheck.ExpectKnownValue(address, tfjsonpath.New("service_fqdn"), knownvalue.StringExact(name+"."+ns+".svc.cluster.local")),
			},
			// The wait was for Suspended: the pod is already gone.
			Check:            resource.ComposeTestCheckFunc(eventuallyGone(pod), exists(svc)),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
		resource.TestStep{
			Config: sandboxConfig(ns, name, fmt.Sprintf(`
  service         = false
  operating_mode  = "Running"
  shutdown_time   = %q
  shutdown_policy = "Delete"
`, shutdown)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("service_fqdn"), knownvalue.StringExact("")),
				statecheck.ExpectKnownValue(address, tfjsonpath.New("shutdown_time"), knownvalue.StringExact(shutdown)),
				acctest.ExpectObject(address, gvr, acctest.Field("Delete", "spec", "shutdownPolicy"), func(obj *unstructured.Unstructured) error {
					want, _ := time.Parse(time.RFC3339, shutdown)
					return acctest.Field(want.UTC().Format(time.RFC3339), "spec", "shutdownTime")(obj)
				}),
			},
			Check:            resource.ComposeTestCheckFunc(exists(pod), eventuallyGone(svc)),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
	))
}

// TestAccSandbox_suspendKeepsVolumes: the PVC made from a claim template
// survives a suspend and a resume. The local cluster has no storage
// provisioner, so the claim stays Pending and the pod cannot start: the
// sandbox is not waited for while running, and what is checked is that the
// PVC object (same UID) is still there.
func TestAccSandbox_suspendKeepsVolumes(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("stateful")
	pvc := acctest.ObjectRef{GVR: pvcGVR, Namespace: ns, Name: "workspace-" + name}
	pod := acctest.ObjectRef{GVR: podGVR, Namespace: ns, Name: name}
	withVolume := func(mode string, wait bool) string {
		return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    containers = [{
      name          = "python-runtime"
      image         = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      volume_mounts = [{ name = "workspace", mount_path = "/workspace" }]
      resources     = { limits = { cpu = "1", memory = "1Gi" } }
    }]
  }
  volume_claim_templates = [{
    name      = "workspace"
    resources = { requests = { storage = "1Gi" } }
  }]
  service        = true
  operating_mode = %[3]q
  wait_for_ready = %[4]t
}
`, name, ns, mode, wait))
	}
	var uid k8stypes.UID
	rememberUID := func(*terraform.State) error {
		// wait_for_ready is false here (the PVC stays Pending without a
		// storage provisioner), so the apply may return before the
		// controller has created the claim: wait for it.
		acctest.WaitFor(t, 30*time.Second, "the sandbox's PVC "+pvc.String(), func(ctx context.Context) (bool, string, error) {
			obj, err := acctest.GetObject(ctx, pvc)
			if err != nil {
				return false, err.Error(), nil //nolint:nilerr // not there yet: keep waiting, report the last error
			}
			uid = obj.GetUID()
			return true, "", nil
		})
		return nil
	}
	sameUID := func(*terraform.State) error {
		if got := acctest.Get(t, pvc).GetUID(); got != uid {
			return fmt.Errorf("PVC %s was recreated (uid %s, was %s): its data would be lost", pvc, got, uid)
		}
		return nil
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: withVolume("Running", false),
			Check:  resource.ComposeTestCheckFunc(rememberUID, exists(pod)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("volume_claim_templates").AtSliceIndex(0).AtMapKey("access_modes"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("ReadWriteOnce")})),
				acctest.ExpectObject(address, gvr, func(obj *unstructured.Unstructured) error {
					vcts, _, _ := unstructured.NestedSlice(obj.Object, "spec", "volumeClaimTemplates")
					if len(vcts) != 1 || !strings.Contains(fmt.Sprint(vcts[0]), "storage:1Gi") {
						return fmt.Errorf("volumeClaimTemplates = %v", vcts)
					}
					return nil
				}),
			},
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config:           withVolume("Suspended", true),
			Check:            resource.ComposeTestCheckFunc(eventuallyGone(pod), sameUID),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
		resource.TestStep{
			Config:           withVolume("Running", false),
			Check:            resource.ComposeTestCheckFunc(exists(pod), sameUID),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
		},
	))
}

func TestAccSandbox_replace(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("agent")
	claim := func(size string) string {
		return fmt.Sprintf(`
  wait_for_ready         = false
  volume_claim_templates = [{ name = "data", resources = { requests = { storage = %q } } }]
`, size)
	}
	var uid k8stypes.UID
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: sandboxConfig(ns, name, claim("1Gi")),
			Check: func(*terraform.State) error {
				uid = acctest.Get(t, acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}).GetUID()
				return nil
			},
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			// Same value, other spelling: no change at all.
			Config:   sandboxConfig(ns, name, claim("1024Mi")),
			PlanOnly: true,
		},
		resource.TestStep{
			// The API makes volume claim templates immutable.
			Config:           sandboxConfig(ns, name, claim("2Gi")),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			Check: func(*terraform.State) error {
				if acctest.Get(t, acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}).GetUID() == uid {
					return fmt.Errorf("the sandbox was not replaced")
				}
				return nil
			},
		},
	))
}

func TestAccSandbox_import(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("agent")
	// Quantities in the server's canonical spelling: "1000m" would be read
	// back from the cluster as "1" on import (see package podtemplate), with
	// the same value.
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox" "test" {
  name        = %[1]q
  namespace   = %[2]q
  labels      = { team = "ml" }
  annotations = { "example.com/owner" = "platform" }
  pod_template = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [{
      name      = "python-runtime"
      image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      env       = [{ name = "MODE", value = "analytics" }]
      ports     = [{ container_port = 8888 }]
      resources = { requests = { cpu = "250m", memory = "512Mi" }, limits = { cpu = "1", memory = "1Gi" } }
    }]
  }
  service         = true
  shutdown_time   = "2099-01-01T00:00:00Z"
  shutdown_policy = "Delete"
}
`, name, ns))
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			Config:            cfg,
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true,
		},
	))
}

func TestAccSandbox_disappears(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("gone")
	cfg := sandboxConfig(ns, name, "")
	// Deleted out of band: the plan creates it again.
	resource.Test(t, fam.Case(t, fam.Disappears(cfg)...))
}

func TestAccSandbox_drift(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("drift")
	cfg := sandboxConfig(ns, name, `  service = true`)
	ref := acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}
	resource.Test(t, fam.Case(t,
		resource.TestStep{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
		resource.TestStep{
			// Out of band: a sidecar, an env variable, a toleration, and
			// the sandbox suspended.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.JSONPatchType, `[
				  {"op": "add", "path": "/spec/podTemplate/spec/containers/-", "value": {"name": "sidecar", "image": "busybox:1"}},
				  {"op": "add", "path": "/spec/podTemplate/spec/containers/0/env", "value": [{"name": "DEBUG", "value": "1"}]},
				  {"op": "add", "path": "/spec/podTemplate/spec/tolerations", "value": [{"operator": "Exists"}]},
				  {"op": "replace", "path": "/spec/operatingMode", "value": "Suspended"}
				]`)
			},
			Config:           cfg,
			ConfigPlanChecks: fam.DriftRepaired("sidecar", "DEBUG", "operator:Exists", "operating_mode:Suspended"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				acctest.ExpectObject(address, gvr, acctest.Field("Running", "spec", "operatingMode"), func(obj *unstructured.Unstructured) error {
					s := fmt.Sprint(obj.Object["spec"])
					for _, w := range []string{"sidecar", "DEBUG", "operator:Exists"} {
						if strings.Contains(s, w) {
							return fmt.Errorf("out-of-band %s survived the apply: %s", w, s)
						}
					}
					return nil
				}),
			},
		},
		resource.TestStep{
			// Out of band: PodSpec fields the typed schema does not model,
			// weakening the isolation. The configuration has no
			// pod_spec_overrides, so they show up there, and the apply
			// removes them.
			PreConfig: func() {
				acctest.Patch(t, ref, k8stypes.MergePatchType, `{"spec": {"podTemplate": {"spec": {"hostNetwork": true}}}}`)
			},
			Config:           cfg,
			ConfigPlanChecks: fam.DriftRepaired(`pod_spec_overrides:{"hostNetwork":true}`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("pod_template").AtMapKey("pod_spec_overrides"), knownvalue.Null()),
				acctest.ExpectObject(address, gvr, func(obj *unstructured.Unstructured) error {
					if v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "podTemplate", "spec", "hostNetwork"); found {
						return fmt.Errorf("out-of-band hostNetwork survived the apply: %v", v)
					}
					return nil
				}),
			},
		},
	))
}

// TestAccSandbox_waitTimeout: a sandbox that cannot become ready fails the
// apply when the timeout ends, and the error names the sandbox and the
// reasons of its conditions.
func TestAccSandbox_waitTimeout(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("stuck")
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    node_selector = { "example.com/pool" = "does-not-exist" }
    containers = [{
      name      = "python-runtime"
      image     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      resources = { limits = { cpu = "1", memory = "1Gi" } }
    }]
  }
  timeouts {
    create = "5s"
  }
}
`, name, ns)),
		ExpectError: regexp.MustCompile(`(?s)Timed out waiting for Sandbox.*` + regexp.QuoteMeta(ns+"/"+name) +
			`.*Ready=False\s+\(DependenciesNotReady\).*PodScheduled=False\s+\(Unschedulable\)`),
	}))
}

// TestAccSandbox_refreshCost: a refresh of unchanged sandboxes costs one
// GET each (no discovery, no LIST, no reads of pods or Services: the status
// comes from the Sandbox).
func TestAccSandbox_refreshCost(t *testing.T) {
	const n = 3
	ns := acctest.Namespace(t)
	name := acctest.RandomName("cost")
	cfg := acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox" "test" {
  count     = %[3]d
  name      = "%[1]s-${count.index}"
  namespace = %[2]q
  service   = true
  pod_template = {
    containers = [{ name = "main", image = "python:3.13", resources = { limits = { cpu = "1", memory = "1Gi" } } }]
  }
}
`, name, ns, n))
	cost := acctest.NewRequestCost(t, n, "sandboxes")
	resource.Test(t, fam.Case(t,
		cost.CreateStep(cfg, "create, waiting for Ready"),
		cost.RefreshStep("GET /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes/{name}", 0),
	))
}

// TestAccSandbox_badInput runs bad configurations through the terraform
// CLI: they fail at plan, with nothing written (the only requests are the
// plan-time lookups' GETs). Terraform 1.11 shows the
// resource's line for a path into a list of nested attributes, so the
// detail must quote the offending value (the exact attribute paths are
// checked in TestBadInputFailsAtPlanWithItsPath).
func TestAccSandbox_badInput(t *testing.T) {
	ns := acctest.Namespace(t)
	resource.Test(t, fam.Case(t, acctest.RefusedAtPlan(t,
		acctest.BadConfig{Config: sandboxConfig(ns, "bad", `  volume_claim_templates = [{ name = "data", resources = { requests = { storage = "1Gx" } } }]`), Error: `(?s)"1Gx"`},
		acctest.BadConfig{Config: sandboxConfig(ns, "bad", `  shutdown_time = "next tuesday"`), Error: `(?s)"next tuesday".*RFC 3339`},
		acctest.BadConfig{Config: sandboxConfig(ns, "bad", `  operating_mode = "Paused"`), Error: `(?s)operating_mode.*"Paused"`},
		acctest.BadConfig{Config: sandboxConfig(ns, "bad", `  shutdown_time = "2001-01-01T00:00:00Z"`), Error: `(?s)Shutdown time in the past.*"2001-01-01T00:00:00Z"`},
		// Looked up at plan (one GET, nothing written): the API server
		// would accept it and no pod would ever start.
		acctest.BadConfig{Config: strings.Replace(sandboxConfig(ns, "bad", ""), "  pod_template = {\n",
			"  pod_template = {\n    runtime_class_name = \"kata-missing\"\n", 1),
			Error: `(?s)RuntimeClass not found.*no\s+RuntimeClass\s+"kata-missing".*runtime_class_name`},
	)...))
}
