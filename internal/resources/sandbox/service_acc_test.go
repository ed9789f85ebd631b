package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// stillAbsent checks that ref does not appear for a while (the controller
// reconciles within a second here; 3 s leaves it time to do the wrong thing).
func stillAbsent(ref acctest.ObjectRef) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if _, err := acctest.GetObject(context.Background(), ref); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: want not found, got %w", ref, err)
			}
		}
		return nil
	}
}

// TestAccSandbox_serviceUnsetKeepsFalseDeletes: service is three-valued as
// upstream's spec.service (api/v1beta1/sandbox_types.go:260-267 at v0.5.6):
// true creates the headless Service; unset is not sent, so the controller
// keeps the Service that exists and creates none; false deletes it. Each
// step re-plans empty.
func TestAccSandbox_serviceUnsetKeepsFalseDeletes(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.RandomName("agent")
	svc := acctest.ObjectRef{GVR: svcGVR, Namespace: ns, Name: name}
	serviceState := func(want knownvalue.Check) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(address, tfjsonpath.New("service"), want)
	}
	resource.Test(t, fam.Case(t,
		resource.TestStep{
			Config:            sandboxConfig(ns, name, `  service = true`),
			Check:             exists(svc),
			ConfigStateChecks: []statecheck.StateCheck{serviceState(knownvalue.Bool(true))},
			ConfigPlanChecks:  acctest.EmptyPlanAfterApply,
		},
		resource.TestStep{
			// Unset: the field is given up, the Service stays.
			Config:           sandboxConfig(ns, name, ""),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
			Check:            resource.ComposeTestCheckFunc(exists(svc), stillPresent(svc)),
			ConfigStateChecks: []statecheck.StateCheck{
				serviceState(knownvalue.Null()),
				acctest.ExpectObject(address, gvr, acctest.Absent("spec", "service")),
			},
		},
		resource.TestStep{
			Config:           sandboxConfig(ns, name, `  service = false`),
			ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate),
			Check:            eventuallyGone(svc),
			ConfigStateChecks: []statecheck.StateCheck{
				serviceState(knownvalue.Bool(false)),
				acctest.ExpectObject(address, gvr, acctest.Field(false, "spec", "service")),
			},
		},
		resource.TestStep{
			// Unset again with no Service: none is created.
			Config:            sandboxConfig(ns, name, ""),
			ConfigPlanChecks:  fam.Planned(plancheck.ResourceActionUpdate),
			Check:             stillAbsent(svc),
			ConfigStateChecks: []statecheck.StateCheck{serviceState(knownvalue.Null())},
		},
		resource.TestStep{
			// Unset leaves the field to others: a Service switched on by
			// kubectl is not drift.
			PreConfig: func() {
				acctest.Patch(t, acctest.ObjectRef{GVR: gvr, Namespace: ns, Name: name}, k8stypes.MergePatchType,
					`{"spec":{"service":true}}`)
			},
			Config: sandboxConfig(ns, name, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: exists(svc),
		},
	))
}

// stillPresent checks that ref stays for a while (the controller would
// delete it within a second if it were going to).
func stillPresent(ref acctest.ObjectRef) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if _, err := acctest.GetObject(context.Background(), ref); err != nil {
				return fmt.Errorf("%s: want it kept, got %w", ref, err)
			}
		}
		return nil
	}
}
