package fastpath

import (
	"bytes"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Reader is implemented by a resource type whose ReadResource the fast
// path may answer. ReadFastPath must return true only when the type's
// Read is a deterministic function of the current state, its private
// state, the one Kubernetes object it GETs, the provider's field manager
// and the provider binary (no clock, no other request, no environment),
// and when that Read reports the object it read to the call's ReadSlot
// (ReadSlotFrom) and takes a prefetched object from it.
type Reader interface {
	resource.Resource
	ReadFastPath() bool
	// FastReadContext returns the provider's field manager for the
	// provider data Configure handed to resources; ok is false when the
	// fast path must not answer (e.g. no cluster configured).
	FastReadContext(providerData any) (fieldManager string, ok bool)
	// FastReadGet GETs the object key names as the type's Read would
	// (same client, counters, rate limits, retries). ok is false when the
	// GET failed with anything but the object's own 404: the framework
	// then reads, and reports the error in its words. obj is what the
	// type's Read takes from the slot instead of a GET.
	FastReadGet(ctx context.Context, providerData any, key ObjectKey) (seen Seen, obj any, ok bool)
}

var reads tally

// ReadCounts returns how many ReadResource calls the fast path answered
// and how many it handed to the framework.
func ReadCounts() (readsFast, readsFramework int64) { return reads.counts() }

// reader returns the Reader of typeName when its reads may be answered
// now, with the provider data and field manager.
func (s *Server) reader(ctx context.Context, typeName string) (Reader, any, string) {
	if !s.configured.Load() {
		return nil, nil, ""
	}
	ti := s.typeInfo(ctx, typeName)
	if ti == nil || ti.tfType == nil {
		return nil, nil, ""
	}
	rd, ok := ti.factory().(Reader)
	if !ok || !rd.ReadFastPath() {
		return nil, nil, ""
	}
	data, ok := s.providerData()
	if !ok {
		return nil, nil, ""
	}
	fm, ok := rd.FastReadContext(data)
	if !ok || fm == "" {
		return nil, nil, ""
	}
	return rd, data, fm
}

// ReadEligible reports whether reads of typeName may be answered by the
// fast path (the provider must be configured).
func (s *Server) ReadEligible(ctx context.Context, typeName string) bool {
	rd, _, _ := s.reader(ctx, typeName)
	return rd != nil && binaryIdentity() != ""
}

func (s *Server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	defer callStarted()()
	if req == nil || req.CurrentState == nil || len(req.CurrentState.MsgPack) == 0 || req.CurrentIdentity != nil {
		reads.delegated.Add(1)
		return callFramework(ctx, s.FrameworkServer.ReadResource, req)
	}
	rd, data, fm := s.reader(ctx, req.TypeName)
	binary := binaryIdentity()
	if rd == nil || binary == "" {
		reads.delegated.Add(1)
		return callFramework(ctx, s.FrameworkServer.ReadResource, req)
	}
	ctx, slot := withReadSlot(ctx)
	hash := stateHash(req.CurrentState.MsgPack)
	if m, ok := decodePrivate(req.Private); ok && m.Type == req.TypeName && m.FieldManager == fm &&
		m.Binary == binary && m.StateSHA256 == hash {
		seen, obj, ok := rd.FastReadGet(ctx, data, m.Object)
		if ok {
			if seen.Found && seen.UID == m.UID && seen.ResourceVersion == m.ResourceVersion {
				reads.answered.Add(1)
				return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
			}
			// Changed, recreated or gone: the framework reads it, from
			// this GET.
			slot.offer(seen, obj)
		}
	}
	reads.delegated.Add(1)
	resp, err := callFramework(ctx, s.FrameworkServer.ReadResource, req)
	if err == nil && resp != nil {
		s.mark(ctx, req, resp, slot, hash, fm, binary)
	}
	return resp, err
}

// mark writes the read marker into the framework's answer when the answer
// is a fixed point: the new state is the current state, with no
// diagnostic (warnings included), no deferral, no identity, and no private
// state of the resource's own, and the Read GOT exactly one object, which
// it found. The marker then certifies that this Read, given this state
// (the hash of the bytes Terraform sent, which it sends again for an
// unchanged value), this object (uid and resourceVersion), field manager
// and binary, answers this state and nothing else; a Read being a
// deterministic function of those (Reader), the same inputs later get the
// same answer, which the fast path gives without the framework. In any
// other case, a marker the request held is removed, so that no marker
// outlives the state it describes.
func (s *Server) mark(ctx context.Context, req *tfprotov6.ReadResourceRequest, resp *tfprotov6.ReadResourceResponse, slot *ReadSlot, hash, fm, binary string) {
	rest, had, ok := withoutReadMarker(resp.Private)
	if !ok {
		return
	}
	seen, one := slot.only()
	fixed := one && seen.Found && len(resp.Diagnostics) == 0 && resp.Deferred == nil && resp.NewIdentity == nil &&
		len(rest) == 0 && resp.NewState != nil && s.sameState(ctx, req.TypeName, req.CurrentState, resp.NewState)
	if !fixed {
		if had {
			resp.Private = rest
		}
		return
	}
	m := readMarker{
		Type: req.TypeName, Object: seen.Key, UID: seen.UID, ResourceVersion: seen.ResourceVersion,
		StateSHA256: hash, FieldManager: fm, Binary: binary,
	}
	// A plan marker certifies what a plan of this very state gives (plan.go):
	// still true when the state is.
	if old, ok := decodePrivate(req.Private); ok && old.Plan != nil && old.Type == m.Type &&
		old.StateSHA256 == hash && old.Binary == binary {
		m.Plan = old.Plan
	}
	if !m.complete() {
		if had {
			resp.Private = rest
		}
		return
	}
	if p, err := m.encodePrivate(); err == nil {
		resp.Private = p
	} else if had {
		resp.Private = rest
	}
}

// sameState reports whether a and b hold the same value (the framework's
// encoding of a map is not ordered, so equal bytes are not required).
func (s *Server) sameState(ctx context.Context, typeName string, a, b *tfprotov6.DynamicValue) bool {
	if len(a.MsgPack) == 0 || len(b.MsgPack) == 0 {
		return false
	}
	if bytes.Equal(a.MsgPack, b.MsgPack) {
		return true
	}
	ti := s.typeInfo(ctx, typeName)
	if ti == nil || ti.tfType == nil {
		return false
	}
	av, err := a.Unmarshal(ti.tfType)
	if err != nil {
		return false
	}
	bv, err := b.Unmarshal(ti.tfType)
	if err != nil || av.IsNull() {
		return false
	}
	return av.Equal(bv)
}
