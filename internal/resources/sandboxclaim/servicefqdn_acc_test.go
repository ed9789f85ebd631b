package sandboxclaim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// claimServiceFQDNRelease says whether the release under test mirrors the
// sandbox's service FQDN into the claim's status.sandbox.serviceFQDN
// (v1.0.1 and later: extensions/api/v1beta1/sandboxclaim_types.go:165-171,
// extensions/controllers/sandboxclaim_controller.go:850-861 at v1.0.1; the
// v0.5.x status has name and podIPs only, sandboxclaim_types.go:149-161 at
// v0.5.6), and names the release. The test's one question about the
// release: adapt it here if the test world's API changes.
func claimServiceFQDNRelease(t *testing.T) (mirrors bool, release string) {
	t.Helper()
	p, err := testenv.ProfileFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return p.ClaimServiceFQDN, p.Name
}

// TestAccSandboxClaim_serviceFQDN: a claim whose sandbox has a headless
// Service (the template sets `service: true`) reports its DNS name in
// service_fqdn, resource and data source alike, once the apply that waited
// for it returns: on v1.0.1 and later the sandbox's own
// `<sandbox name>.<namespace>.svc.cluster.local` (the controller's default
// --cluster-domain), as the claim's status shows it; on v0.5.x, whose
// claims do not report it, null, though the sandbox has one. An in-place
// update keeps the sandbox, so the plan keeps the FQDN known and the apply
// leaves it as it was; no plan after an apply or a refresh shows a change.
func TestAccSandboxClaim_serviceFQDN(t *testing.T) {
	mirrors, release := claimServiceFQDNRelease(t)
	t.Logf("release %s: claims report their sandbox's service FQDN: %v", release, mirrors)
	ns := acctest.Namespace(t)
	acctest.CreateTemplate(t, ns, "python", map[string]any{
		"networkPolicyManagement": "Unmanaged",
		"service":                 true,
		"podTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
			"name": "python", "image": "registry.example/python-runtime:1",
			"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}},
		}}}},
	})
	name := acctest.RandomName("session")
	config := func(extra string) string {
		return claimConfig(ns, name, fmt.Sprintf(`  warm_pool = agentsandbox_warm_pool.a.name
%s
}

data "agentsandbox_sandbox_claim" "test" {
  name      = agentsandbox_sandbox_claim.test.name
  namespace = agentsandbox_sandbox_claim.test.namespace`, extra))
	}
	var sandbox, fqdn captured
	// wantFQDN: the sandbox the state names, in the test's namespace.
	wantFQDN := knownvalue.StringFunc(func(s string) error {
		if want := sandbox.v + "." + ns + ".svc.cluster.local"; s != want {
			return fmt.Errorf("service_fqdn = %q, want %q (sandbox %q)", s, want, sandbox.v)
		}
		fqdn.v = s
		return nil
	})
	// live: the claim's status and its sandbox's, as the cluster has them.
	live := sandboxOf(t, func(claim, sb *unstructured.Unstructured) error {
		want := sb.GetName() + "." + ns + ".svc.cluster.local"
		if got, _, _ := unstructured.NestedString(sb.Object, "status", "serviceFQDN"); got != want {
			return fmt.Errorf("sandbox %s: status.serviceFQDN = %q, want %q (has the template's service = true reached it?)", sb.GetName(), got, want)
		}
		got, has, _ := unstructured.NestedString(claim.Object, "status", "sandbox", "serviceFQDN")
		switch {
		case mirrors && got != want:
			return fmt.Errorf("%s: claim status.sandbox.serviceFQDN = %q, want its sandbox's %q", release, got, want)
		case !mirrors && has:
			return fmt.Errorf("%s: claim status.sandbox.serviceFQDN = %q; this release is not known to write it", release, got)
		}
		return nil
	})
	stateChecks := func() []statecheck.StateCheck {
		checks := []statecheck.StateCheck{
			statecheck.ExpectKnownValue(address, tfjsonpath.New("ready"), knownvalue.Bool(true)),
			live,
		}
		if !mirrors {
			return append(checks,
				statecheck.ExpectKnownValue(address, tfjsonpath.New("service_fqdn"), knownvalue.Null()),
				statecheck.ExpectKnownValue(data, tfjsonpath.New("service_fqdn"), knownvalue.Null()))
		}
		return append(checks,
			statecheck.ExpectKnownValue(address, tfjsonpath.New("sandbox_name"), sandbox.set()),
			statecheck.ExpectKnownValue(address, tfjsonpath.New("service_fqdn"), wantFQDN),
			statecheck.ExpectKnownValue(data, tfjsonpath.New("service_fqdn"), knownvalue.StringFunc(func(s string) error {
				if s != fqdn.v {
					return fmt.Errorf("data source: service_fqdn = %q, the resource has %q", s, fqdn.v)
				}
				return nil
			})))
	}
	// The in-place update's plan: the FQDN is known (the state's) where the
	// claim reports one, and left to the apply otherwise.
	inPlaceFQDN := plancheck.ExpectUnknownValue(address, tfjsonpath.New("service_fqdn"))
	if mirrors {
		inPlaceFQDN = plancheck.ExpectKnownValue(address, tfjsonpath.New("service_fqdn"), knownvalue.StringFunc(func(s string) error {
			if s != fqdn.v {
				return fmt.Errorf("planned service_fqdn = %q, want the state's %q", s, fqdn.v)
			}
			return nil
		}))
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config: config(""),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectUnknownValue(address, tfjsonpath.New("service_fqdn"))},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: stateChecks(),
		},
		resource.TestStep{
			Config:            config(fmt.Sprintf("  shutdown_time = %q", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))),
			ConfigPlanChecks:  fam.Planned(plancheck.ResourceActionUpdate, inPlaceFQDN),
			ConfigStateChecks: stateChecks(),
		},
		resource.TestStep{
			RefreshState: true,
			RefreshPlanChecks: resource.RefreshPlanChecks{
				PostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
		},
	))
}
