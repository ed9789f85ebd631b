package sandboxclaim_test

import (
	"fmt"
	"regexp"
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

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// volumesTemplate is the template "python" with the given
// volumeClaimTemplatesPolicy ("" leaves upstream's default, Disallowed).
func volumesTemplate(t *testing.T, ns, policy string) {
	t.Helper()
	spec := map[string]any{
		"networkPolicyManagement": "Unmanaged",
		"podTemplate": map[string]any{
			"spec": map[string]any{"containers": []any{map[string]any{
				"name": "python", "image": "registry.example/python-runtime:1",
				"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}},
			}}},
		},
	}
	if policy != "" {
		spec["volumeClaimTemplatesPolicy"] = policy
	}
	acctest.CreateTemplate(t, ns, "python", spec)
}

// volumesBody waits for Ready only when asked: the local cluster has no
// storage provisioner, so a claimed volume stays unbound and the pod
// Pending (as in agentsandbox_sandbox's volume tests).
func volumesBody(size string, wait bool) string {
	return fmt.Sprintf(`  warm_pool      = agentsandbox_warm_pool.a.name
  wait_for_ready = %t
  volume_claim_templates = [{
    name = "workspace"
    resources = { requests = { storage = %q } }
  }]`, wait, size)
}

// TestAccSandboxClaim_volumeClaimTemplates: a claim's volume claim
// templates reach the sandbox the controller creates for it (a cold start,
// as upstream's claim controller does: extensions/controllers/
// sandboxclaim_controller.go, volumeClaimTemplates merged under the
// template's volumeClaimTemplatesPolicy at v0.5.6); the plan is empty
// afterwards, import reads them back, and a change replaces the claim.
func TestAccSandboxClaim_volumeClaimTemplates(t *testing.T) {
	ns := acctest.Namespace(t)
	volumesTemplate(t, ns, "Allowed")
	name := acctest.RandomName("session")
	// The sandbox the controller creates for the claim (a cold start, so
	// not at once) carries the claim's volume claim template, and its PVC
	// exists.
	sandboxVolumes := func(want string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			var last error
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
				if last = checkSandboxVolumes(t, ns, name, want); last == nil {
					return nil
				}
			}
			return last
		}
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           claimConfig(ns, name, volumesBody("1Gi", false)),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check:            sandboxVolumes("1Gi"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(address, tfjsonpath.New("volume_claim_templates").AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("workspace")),
				acctest.ExpectObject(address, gvr, acctest.Mentions("workspace", "spec", "volumeClaimTemplates")),
			},
		},
		resource.TestStep{
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true,
			// Not waited for: sandbox_name was still empty when the apply
			// returned, and an import cannot know wait_for_ready.
			ImportStateVerifyIgnore: []string{"timeouts", "wait_for_ready", "sandbox_name"},
		},
		resource.TestStep{
			Config:           claimConfig(ns, name, volumesBody("2Gi", false)),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionDestroyBeforeCreate),
			Check:            sandboxVolumes("2Gi"),
		},
	))
}

// TestAccSandboxClaim_volumeClaimTemplatesDisallowed: under the template's
// default policy the controller rejects the claim's volumes, and the apply
// fails at once with the controller's reason and what to change.
func TestAccSandboxClaim_volumeClaimTemplatesDisallowed(t *testing.T) {
	ns := acctest.Namespace(t)
	volumesTemplate(t, ns, "")
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:      claimConfig(ns, acctest.RandomName("session"), volumesBody("1Gi", true)),
			ExpectError: regexp.MustCompile(`(?s)VolumeClaimTemplatesError.*volume_claim_templates_policy`),
		},
	))
}

// checkSandboxVolumes reads the claim, its sandbox and the sandbox's PVC.
func checkSandboxVolumes(t *testing.T, ns, claim, want string) error {
	ctx := t.Context()
	c, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return err
	}
	name, _, _ := unstructured.NestedString(c.Object, "status", "sandbox", "name")
	if name == "" {
		return fmt.Errorf("claim %s/%s holds no sandbox yet", ns, claim)
	}
	sb, err := acctest.Dynamic(t).Resource(sandboxapi.SandboxGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	vcts, _, _ := unstructured.NestedSlice(sb.Object, "spec", "volumeClaimTemplates")
	if len(vcts) != 1 {
		return fmt.Errorf("sandbox %s has volume claim templates %v, want workspace", name, vcts)
	}
	v, _ := vcts[0].(map[string]any)
	size, _, _ := unstructured.NestedString(v, "spec", "resources", "requests", "storage")
	if n, _, _ := unstructured.NestedString(v, "metadata", "name"); n != "workspace" || size != want {
		return fmt.Errorf("sandbox %s volume claim template %v, want workspace of %s", name, v, want)
	}
	if _, err := acctest.Clientset(t).CoreV1().PersistentVolumeClaims(ns).Get(ctx, "workspace-"+name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("PVC workspace-%s of sandbox %s: %w", name, name, err)
	}
	return nil
}
