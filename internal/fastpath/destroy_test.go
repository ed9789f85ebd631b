package fastpath

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// destroyPlanning is fixedRead with a ModifyPlan that says what say says
// on a destroy.
type destroyPlanning struct {
	fixedRead
	say string // "", "warn" or "plan" (leaves a non-null plan)
}

func (d *destroyPlanning) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.Plan.Raw.IsNull() {
		return
	}
	switch d.say {
	case "warn":
		resp.Diagnostics.AddWarning("destroy", "with a warning")
	case "plan":
		resp.Plan.Raw = req.State.Raw
	}
}

// frameworkPlans is a framework server whose PlanResourceChange answers
// with a marker diagnostic, to tell its answers from the fast path's.
type frameworkPlans struct{ writingApply }

func (frameworkPlans) PlanResourceChange(context.Context, *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return &tfprotov6.PlanResourceChangeResponse{Diagnostics: []*tfprotov6.Diagnostic{{Summary: "the framework"}}}, nil
}

// The plan of a destroy is answered (null plan, prior private state) when
// the resource's ModifyPlan says nothing and leaves the plan null; any
// other ModifyPlan, private state or identity goes to the framework.
func TestPlanDestroy(t *testing.T) {
	ctx := context.Background()
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String, "value": tftypes.String}}
	prior, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "ns/a"), "value": tftypes.NewValue(tftypes.String, "x")}))
	if err != nil {
		t.Fatal(err)
	}
	null, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	if err != nil {
		t.Fatal(err)
	}
	marker := readMarker{Type: "agentsandbox_thing", Object: ObjectKey{Version: "v1", Resource: "things", Name: "a"}, UID: "u",
		ResourceVersion: "1", StateSHA256: stateHash(prior.MsgPack), FieldManager: "agentsandbox", Binary: "b"}
	onlyMarker, err := marker.encodePrivate()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		say     string
		private []byte
		answer  bool
	}{
		{name: "ModifyPlan says nothing", answer: true},
		{name: "with the read marker", private: onlyMarker, answer: true},
		{name: "with another private key", private: []byte(`{"other":"dHJ1ZQ=="}`)},
		{name: "ModifyPlan warns", say: "warn"},
		{name: "ModifyPlan plans a state", say: "plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &destroyPlanning{say: tc.say}
			s := New(frameworkPlans{}, "agentsandbox", []func() resource.Resource{func() resource.Resource { r := *res; return &r }},
				func() (any, bool) { return struct{}{}, true })
			if _, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{}); err != nil {
				t.Fatal(err)
			}
			resp, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
				TypeName: "agentsandbox_thing", PriorState: &prior, ProposedNewState: &null, Config: &null, PriorPrivate: tc.private})
			if err != nil {
				t.Fatal(err)
			}
			byFramework := len(resp.Diagnostics) == 1 && resp.Diagnostics[0].Summary == "the framework"
			if byFramework == tc.answer {
				t.Fatalf("answered by the fast path: %t, want %t (%+v)", !byFramework, tc.answer, resp)
			}
			if tc.answer && (string(resp.PlannedState.MsgPack) != string(null.MsgPack) || string(resp.PlannedPrivate) != string(tc.private)) {
				t.Fatalf("planned %x, private %s", resp.PlannedState.MsgPack, resp.PlannedPrivate)
			}
		})
	}
}
