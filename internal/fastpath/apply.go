package fastpath

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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
// call's WriteSlot), it runs the resource's Read in the process
// (readInProcess: Read itself, with what the framework would hand it), on
// the new state, the object taken from a read slot instead of a GET; when
// that Read answers the new state unchanged (with nothing else: no
// diagnostic, private state, deferral or identity), the
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
	defer callStarted()()
	var rd Reader
	var data any
	var fm string
	binary := binaryIdentity()
	if req != nil && req.PlannedState != nil && len(req.PlannedState.MsgPack) > 0 {
		rd, data, fm = s.reader(ctx, req.TypeName)
	}
	if rd == nil || binary == "" {
		resp, err := callFramework(ctx, s.FrameworkServer.ApplyResourceChange, req)
		dropStaleMarker(resp)
		return resp, err
	}
	ctx, slot := withWriteSlot(ctx)
	resp, err := callFramework(ctx, s.FrameworkServer.ApplyResourceChange, req)
	if err == nil && resp != nil {
		if s.markApplied(ctx, req, resp, slot, data, fm, binary) {
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
func (s *Server) markApplied(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest, resp *tfprotov6.ApplyResourceChangeResponse, slot *WriteSlot, data any, fm, binary string) bool {
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
	if ti == nil || ti.tfType == nil || !ti.readInProcessOK {
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
	// The state as the framework will decode it from Terraform's bytes.
	current, err := (&tfprotov6.DynamicValue{MsgPack: sent}).Unmarshal(ti.tfType)
	if err != nil || !current.Equal(newState) {
		return false
	}

	rctx, rslot := withReadSlot(ctx)
	rslot.offer(wrote.seen, wrote.obj)
	got, ok := readInProcess(rctx, ti, data, current)
	if !ok || !rslot.taken() {
		return false
	}
	if seen, one := rslot.only(); !one || seen != wrote.seen {
		return false
	}
	if !got.Equal(current) {
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

// readInProcess runs the resource's Read on state as the framework's
// ReadResource runs it (terraform-plugin-framework v1.19.0,
// internal/fwserver/server_readresource.go:73-140: a resource configured
// with the provider's data, the state as request and response, no
// provider meta, an empty private state) and returns the state it leaves;
// ok is false when Configure or Read says anything (warnings included),
// defers, or writes an identity or private state. For a type with
// readInProcessOK, what the framework does after Read changes nothing of
// a state Read left equal to state: semantic equality (:184-210) calls no
// type's SemanticEquals, none having one, and write-only attributes
// (:212-220), nulled in every state the framework answers, are null in
// state already. So the framework's answer equals state exactly when this
// one does, without its conversions: the state decoded, converted back
// and encoded, then decoded again to compare (a third of an apply's
// marking cost in make bench's profiles).
//
// Private stays nil: a read finds nothing, as in the empty private state
// the framework would pass, and a write fails (the framework's answer
// would then carry private state, which markApplied refuses too).
func readInProcess(ctx context.Context, ti *typeInfo, data any, state tftypes.Value) (tftypes.Value, bool) {
	r, ok := configuredResource(ctx, ti, data)
	if !ok {
		return state, false
	}
	rreq := resource.ReadRequest{State: tfsdk.State{Schema: ti.schema, Raw: state.Copy()}}
	rresp := resource.ReadResponse{State: tfsdk.State{Schema: ti.schema, Raw: state.Copy()}}
	r.Read(ctx, rreq, &rresp)
	if len(rresp.Diagnostics) > 0 || rresp.Deferred != nil || rresp.Identity != nil || rresp.Private != nil {
		return state, false
	}
	return rresp.State.Raw, true
}
