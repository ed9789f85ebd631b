package sandbox_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// mapWithout checks that a map attribute (null or not) lacks a key.
type mapWithout struct{ key string }

func (m mapWithout) CheckValue(v any) error {
	if got, ok := v.(map[string]any); ok {
		if _, has := got[m.key]; has {
			return fmt.Errorf("annotations has %s = %v, which this release's controller does not write", m.key, got[m.key])
		}
	}
	return nil
}

func (m mapWithout) String() string { return "a map without " + m.key }

func TestAccSandboxDataSource_basic(t *testing.T) {
	release, err := testenv.ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	// The controller's annotation (the pod's name) is shown too, on the
	// releases whose controller writes it; v1.0.x only clears it.
	podName := knownvalue.Check(mapWithout{"agents.x-k8s.io/pod-name"})
	if release.SandboxPodNameAnnotation {
		podName = knownvalue.MapPartial(map[string]knownvalue.Check{"agents.x-k8s.io/pod-name": knownvalue.NotNull()})
	}
	ns := acctest.Namespace(t)
	name := acctest.RandomName("agent")
	const ds = "data.agentsandbox_sandbox.test"
	cfg := sandboxConfig(ns, name, `  service = true`) + `
data "agentsandbox_sandbox" "test" {
  name      = agentsandbox_sandbox.test.name
  namespace = agentsandbox_sandbox.test.namespace
}
`
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config: cfg,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("ready"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("operating_mode"), knownvalue.StringExact("Running")),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("service_fqdn"), knownvalue.StringExact(name+"."+ns+".svc.cluster.local")),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("pod_ips"), knownvalue.ListSizeExact(1)),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("pod_template").AtMapKey("runtime_class_name"), knownvalue.StringExact("gvisor")),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("conditions"), knownvalue.ListPartial(map[int]knownvalue.Check{})),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("shutdown_time"), knownvalue.Null()),
			statecheck.ExpectKnownValue(ds, tfjsonpath.New("annotations"), podName),
		},
		ConfigPlanChecks: acctest.EmptyPlanAfterApply,
	}, resource.TestStep{
		Config: acctest.Config(`
data "agentsandbox_sandbox" "missing" {
  name      = "no-such-sandbox"
  namespace = "` + ns + `"
}
`),
		ExpectError: regexp.MustCompile(`(?s)not found.*no-such-sandbox`),
	}))
}

func TestAccSandbox_examplePlans(t *testing.T) {
	resource.Test(t, fam.Case(t, resource.TestStep{
		Config:             acctest.Config(acctest.ExampleConfig(t, "agentsandbox_sandbox")),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}))
}
