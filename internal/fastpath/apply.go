package fastpath

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The read marker after an apply.
//
// A refresh marks a state only when it read the object into that very
// state (read.go), so a state written by an apply had none, and the first
// plan after every apply went to the framework for every object it
// created or changed; a plan writes no state, so every plan until the
// next apply or refresh did. An apply now marks its own new state when it
// can show what a refresh would show: with the object the create or
// update ended with (the one the new state was made from, reported to the
// call's WriteSlot), it runs the resource's Read in the process, through
// the framework, on the new state, the object taken from a read slot
// instead of a GET; when that Read answers the new state unchanged (with
// nothing else: no diagnostic, private state, deferral or identity), the
// marker records the object's uid and resourceVersion and the hash of
// the new state as Terraform will send it back (terraformMsgPack), with
// the field manager and binary. That is exactly what a refresh's marker
// certifies (read.go, mark), established with the same Read: the next
// refresh GETs the object and, when it is still at that resourceVersion,
// answers the state as it is.
//
// Costs: no request (the object is the one the write or the wait
// returned), one Read's conversions per created or updated object, paid
// during the apply instead of during every later plan.

var (
	appliesMarked   atomic.Int64
	appliesUnmarked atomic.Int64
)

// ApplyMarkCounts returns how many applies of eligible types (creates and
// updates) the wrapper marked, and how many it could not.
func ApplyMarkCounts() (marked, unmarked int64) {
	return appliesMarked.Load(), appliesUnmarked.Load()
}

func (s *Server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	var rd Reader
	var fm string
	binary := binaryIdentity()
	if req != nil && req.PlannedState != nil && len(req.PlannedState.MsgPack) > 0 {
		rd, _, fm = s.reader(ctx, req.TypeName)
	}
	if rd == nil || binary == "" {
		resp, err := s.FrameworkServer.ApplyResourceChange(ctx, req)
		dropStaleMarker(resp)
		return resp, err
	}
	ctx, slot := withWriteSlot(ctx)
	resp, err := s.FrameworkServer.ApplyResourceChange(ctx, req)
	if err == nil && resp != nil {
		if s.markApplied(ctx, req, resp, slot, fm, binary) {
			appliesMarked.Add(1)
		} else {
			appliesUnmarked.Add(1)
			dropStaleMarker(resp)
		}
	}
	return resp, err
}

// dropStaleMarker removes from an apply's answer the read marker the
// framework carried over from the planned private state: it describes the
// state before the apply. (It could not answer a read anyway, its state
// hash being the old state's; removed so that no marker outlives the state
// it describes, as after a refresh.)
func dropStaleMarker(resp *tfprotov6.ApplyResourceChangeResponse) {
	if resp == nil {
		return
	}
	if rest, had, ok := withoutReadMarker(resp.Private); ok && had {
		resp.Private = rest
	}
}

// markApplied writes the read marker into resp.Private when the apply's
// new state is what the resource's Read makes of it and of the object the
// apply ended with (see above).
func (s *Server) markApplied(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest, resp *tfprotov6.ApplyResourceChangeResponse, slot *WriteSlot, fm, binary string) bool {
	if len(resp.Diagnostics) > 0 || resp.NewState == nil || len(resp.NewState.MsgPack) == 0 || resp.NewIdentity != nil {
		return false
	}
	if rest, _, ok := withoutReadMarker(resp.Private); !ok || len(rest) > 0 {
		// The resource keeps private state of its own (e.g. what a claim
		// last applied): no marker, as after a refresh.
		return false
	}
	wrote, ok := slot.only()
	if !ok || !wrote.seen.Found {
		return false
	}
	ti := s.typeInfo(ctx, req.TypeName)
	if ti == nil || ti.tfType == nil {
		return false
	}
	newState, err := resp.NewState.Unmarshal(ti.tfType)
	if err != nil || newState.IsNull() || !newState.IsFullyKnown() {
		return false
	}
	sent, ok := terraformMsgPack(newState, ti.tfType)
	if !ok {
		return false
	}

	rctx, rslot := withReadSlot(ctx)
	rslot.offer(wrote.seen, wrote.obj)
	read, err := s.FrameworkServer.ReadResource(rctx, &tfprotov6.ReadResourceRequest{
		TypeName:     req.TypeName,
		CurrentState: &tfprotov6.DynamicValue{MsgPack: sent},
		ProviderMeta: req.ProviderMeta,
	})
	if err != nil || read == nil || len(read.Diagnostics) > 0 || read.Deferred != nil || read.NewIdentity != nil ||
		read.NewState == nil || !rslot.taken() {
		return false
	}
	if rest, _, ok := withoutReadMarker(read.Private); !ok || len(rest) > 0 {
		return false
	}
	if seen, one := rslot.only(); !one || seen != wrote.seen {
		return false
	}
	got, err := read.NewState.Unmarshal(ti.tfType)
	if err != nil || !got.Equal(newState) {
		return false
	}
	m := readMarker{
		Type: req.TypeName, Object: wrote.seen.Key, UID: wrote.seen.UID, ResourceVersion: wrote.seen.ResourceVersion,
		StateSHA256: stateHash(sent), FieldManager: fm, Binary: binary,
	}
	if !m.complete() {
		return false
	}
	m.Plan = s.planMark(ctx, m, sent, req.Config)
	p, err := m.encodePrivate()
	if err != nil {
		return false
	}
	resp.Private = p
	return true
}
