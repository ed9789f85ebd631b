package fastpath

import (
	"bytes"
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The plan of a destroy (null proposed state), as the framework makes it
// (terraform-plugin-framework v1.19.0,
// internal/fwserver/server_planresourcechange.go): the planned state is
// the proposed (null) state (:153); defaults, unknown marking and the
// schema's plan modifiers all skip a null plan (:161, :199, :275); the
// resource's ModifyPlan runs with the null plan, the configuration and
// the prior state (:313-372), and must leave the plan null (:407-416). A
// type with an identity plans one as well, and is not answered here.
//
// Answered here exactly when that ModifyPlan, run as the framework runs it
// (modifyPlan), says nothing, replaces nothing, defers nothing, writes no
// private state and leaves the plan null: the answer is then the null
// plan with the prior private state, as the framework's. As for unchanged
// plans, the prior private state must be empty or hold only the read
// marker (a key no resource reads), so that ModifyPlan reads the same
// (nothing) either way.

var destroysAnswered atomic.Int64

// DestroyCount returns how many plans of a destroy the fast path answered
// (they are also in Counts' plansFast).
func DestroyCount() int64 { return destroysAnswered.Load() }

// isDestroy reports whether req plans a destroy of an existing object (its
// proposed state is null, its prior state is not), without decoding
// anything.
func isDestroy(req *tfprotov6.PlanResourceChangeRequest) bool {
	return req.ProposedNewState != nil && len(req.ProposedNewState.JSON) == 0 &&
		bytes.Equal(req.ProposedNewState.MsgPack, msgpackNull) && !isCreate(req)
}

// planDestroy returns the framework's answer to the plan of a destroy,
// when it can show what it is.
func (s *Server) planDestroy(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	if req.PriorState == nil || len(req.PriorState.MsgPack) == 0 || req.PriorIdentity != nil ||
		(len(req.PriorPrivate) > 0 && !onlyReadMarker(req.PriorPrivate)) {
		return nil, false
	}
	ti, data, ok := s.planType(ctx, req.TypeName, func(ti *typeInfo) bool { return ti.destroyOK })
	if !ok {
		return nil, false
	}
	prior, err := req.PriorState.Unmarshal(ti.tfType)
	if err != nil || prior.IsNull() {
		return nil, false
	}
	config := tftypes.NewValue(ti.tfType, nil)
	if req.Config != nil {
		if config, err = req.Config.Unmarshal(ti.tfType); err != nil {
			return nil, false
		}
	}
	planned, ok := modifyPlan(ctx, ti, data, req.ClientCapabilities, config, tftypes.NewValue(ti.tfType, nil), prior)
	if !ok || !planned.IsNull() {
		return nil, false
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate}, true
}
