package sandboxtemplate_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

func TestAccSandboxTemplateDataSource_basic(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("tmpl")
	const ds = "data.agentsandbox_sandbox_template.test"
	cfg := testAccSandboxTemplateConfig_full(ns, name) + `
data "agentsandbox_sandbox_template" "test" {
  name      = agentsandbox_sandbox_template.test.name
  namespace = agentsandbox_sandbox_template.test.namespace
}
`
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/"+name)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("pod_template").AtMapKey("runtime_class_name"), knownvalue.StringExact("gvisor")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("pod_template").AtMapKey("containers").AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("python-runtime")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("volume_claim_templates").AtSliceIndex(0).AtMapKey("resources").AtMapKey("requests").AtMapKey("storage"), knownvalue.StringExact("1Gi")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("service"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("network_policy_management"), knownvalue.StringExact("Managed")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("network_policy_name"), knownvalue.StringExact(name+"-network-policy")),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("env_vars_injection_policy"), knownvalue.StringExact("Allowed")),
				// All labels, the controller's included.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("labels").AtMapKey("team"), knownvalue.StringExact("ml")),
				statecheck.CompareValuePairs(ds, tfjsonpath.New("network_policy_rendered"), address, tfjsonpath.New("network_policy_rendered"), compareEqual{}),
			},
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			Config: acctest.Config(fmt.Sprintf(`
data "agentsandbox_sandbox_template" "missing" {
  name      = "no-such-template"
  namespace = %q
}
`, ns)),
			ExpectError: regexp.MustCompile(`(?s)not found.*no-such-template`),
		},
	))
}

// compareEqual is a compare.ValueComparer for two equal values.
type compareEqual struct{}

func (compareEqual) CompareValues(values ...any) error {
	if len(values) != 2 || fmt.Sprint(values[0]) != fmt.Sprint(values[1]) || values[0] == nil {
		return fmt.Errorf("values differ or are null: %v", values)
	}
	return nil
}

// TestAccSandboxTemplate_examplePlans plans the documentation's example, so
// the registry page never shows a configuration the provider refuses.
func TestAccSandboxTemplate_examplePlans(t *testing.T) {
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config:             acctest.Config(acctest.ExampleConfig(t, "agentsandbox_sandbox_template")),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}))
}
