package sandboxtemplate_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"golang.org/x/mod/semver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// overridesConfig is a template whose pod_spec_overrides sets
// evictionResponders, a PodSpec field of Kubernetes 1.37 (k8s.io/api
// v0.37, which the provider is built with) that the CRDs of every release
// built with an older k8s.io/api lack: v0.5.6 was built with v0.36.3
// (go.mod:30 at v0.5.6), v1.0.1 with v0.36.4; v1.0.3 with v0.37.0 has it.
func overridesConfig(ns, name string) string {
	return acctest.Config(fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "test" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      resources = {
        limits = { cpu = "1", memory = "1Gi" }
      }
    }]
    pod_spec_overrides = jsonencode({
      evictionResponders = [{ name = "example.com/drainer", priority = 10000 }]
    })
  }
}
`, name, ns))
}

// TestAccSandboxTemplate_releaseOverridesServed: pod_spec_overrides is
// checked at plan against the pod spec schema the cluster's CRD serves.
// Against a profile whose release was built with an older Kubernetes API
// (every v0.5.x and v1.0.1), a field only the newer PodSpec has fails the
// plan, naming the field, and nothing is written; against one that serves
// it (v1.0.3), it is applied and read back.
func TestAccSandboxTemplate_releaseOverridesServed(t *testing.T) {
	profile, err := testenv.ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("release profile %s (Kubernetes API %q)", profile, profile.KubernetesAPI)
	ns := acctest.Namespace(t)
	name := acctest.RandomName("tmpl")
	if semver.Compare(profile.KubernetesAPI, "v0.37.0") < 0 {
		resource.Test(t, fam.Case(t,
			resource.TestStep{
				Config:   overridesConfig(ns, name),
				PlanOnly: true,
				// Terraform wraps the message: any space may be a line break.
				ExpectError: regexp.MustCompile(`(?s)pod_spec_overrides sets fields the cluster does not serve.*` +
					`sandboxtemplates\.extensions\.agents\.x-k8s\.io\s+CRD\s+\(version\s+v1beta1\)\s+has\s+no\s+spec\.evictionResponders`),
			},
		))
		if _, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("SandboxTemplate %s/%s after a plan that failed: %v (want not found: nothing written)", ns, name, err)
		}
		return
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:           overridesConfig(ns, name),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{acctest.ExpectObject(address, gvr, func(u *unstructured.Unstructured) error {
				rs, _, _ := unstructured.NestedSlice(u.Object, "spec", "podTemplate", "spec", "evictionResponders")
				if len(rs) != 1 {
					return fmt.Errorf("spec.podTemplate.spec.evictionResponders = %v, want the one responder", rs)
				}
				return nil
			})},
		},
	))
}
