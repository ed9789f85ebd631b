package fastpath

import (
	"bytes"
	"context"
	"crypto/sha256"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The plan marker.
//
// The unchanged plan (fastpath.go, unchanged) decodes the prior state and
// the configuration and runs the resource's ModifyPlan on them: for a
// sandbox template, about 40 % of the provider's CPU in a no-change plan.
// Its answer is a deterministic function of its inputs: the resource
// type, the prior state's bytes (which are also the proposed new state's),
// the configuration's bytes, the provider configuration, the client's
// deferral capability and the binary. (This provider's ModifyPlans read
// neither the cluster nor the provider's data for an unchanged plan: their
// checks against the cluster look only at what a change brings, e.g.
// podtemplate.CheckRuntimeClass. A resource whose unchanged plan must
// consult anything else must not be a fast-read type.)
//
// So an apply that marks its new state for reads (apply.go) also asks the
// question the next plan will ask, with the inputs it will come with: the
// new state as Terraform sends it back (terraformMsgPack) as prior and
// proposed state, the configuration the apply was given (Terraform
// encodes it with go-cty's msgpack in both calls, so an unchanged
// configuration comes with the same bytes), the marker as prior private
// state, no deferral. When the unchanged plan answers, the read marker
// records the configuration's hash and the provider configuration's. A
// later plan with the same state, configuration, provider configuration
// and binary, no deferral and that very marker as its private state is
// then answered with its prior state without decoding anything. Any other
// plan goes on as before.
//
// The marker lives in the read marker, so it lasts exactly as long: a
// refresh that finds the object unchanged keeps it (read.go); a refresh
// through the framework that marks the same state again carries it over
// (the state's hash is part of what it certifies); an apply writes a new
// one or none.

// planMarker names the configuration and provider settings under which a
// plan of the read marker's state is the state itself.
type planMarker struct {
	// ConfigSHA256 is the hex SHA-256 of the configuration's msgpack
	// bytes as Terraform sent them.
	ConfigSHA256 string `json:"config_sha256"`
	// ProviderSHA256 is the hex SHA-256 of the provider configuration's
	// msgpack bytes (ConfigureProvider).
	ProviderSHA256 string `json:"provider_sha256"`
}

func (p planMarker) complete() bool {
	return len(p.ConfigSHA256) == sha256.Size*2 && len(p.ProviderSHA256) == sha256.Size*2
}

var plansByMarker atomic.Int64

// PlanMarkerCount returns how many plans the plan marker answered (they
// are among Counts' plans answered).
func PlanMarkerCount() int64 { return plansByMarker.Load() }

// configureHash records the hash of the provider configuration a
// successful ConfigureProvider was given ("" when there was none).
func (s *Server) configureHash(req *tfprotov6.ConfigureProviderRequest, ok bool) {
	h := ""
	if ok && req != nil && req.Config != nil && len(req.Config.MsgPack) > 0 {
		h = stateHash(req.Config.MsgPack)
	}
	s.providerHash.Store(&h)
}

func (s *Server) providerConfigHash() string {
	if h := s.providerHash.Load(); h != nil {
		return *h
	}
	return ""
}

// plannedByMarker reports whether req is the plan its prior private
// state's plan marker was made for (see above).
func (s *Server) plannedByMarker(req *tfprotov6.PlanResourceChangeRequest) bool {
	if !s.configured.Load() || req.PriorState == nil || req.ProposedNewState == nil || req.Config == nil ||
		req.PriorIdentity != nil || (req.ClientCapabilities != nil && req.ClientCapabilities.DeferralAllowed) {
		return false
	}
	prior := req.PriorState.MsgPack
	if len(prior) == 0 || len(req.Config.MsgPack) == 0 || !bytes.Equal(prior, req.ProposedNewState.MsgPack) {
		return false
	}
	m, ok := decodePrivate(req.PriorPrivate)
	if !ok || m.Plan == nil {
		return false
	}
	ph := s.providerConfigHash()
	binary := binaryIdentity()
	return ph != "" && binary != "" && m.Type == req.TypeName && m.Binary == binary &&
		m.Plan.ProviderSHA256 == ph && m.StateSHA256 == stateHash(prior) &&
		m.Plan.ConfigSHA256 == stateHash(req.Config.MsgPack)
}

// planMark returns the plan marker for m's state (encoded as sent, which
// m.StateSHA256 hashes) under config, when the unchanged plan answers the
// plan Terraform will send for them; nil otherwise.
func (s *Server) planMark(ctx context.Context, m readMarker, sent []byte, config *tfprotov6.DynamicValue) *planMarker {
	ph := s.providerConfigHash()
	if ph == "" || config == nil || len(config.MsgPack) == 0 || m.Plan != nil {
		return nil
	}
	private, err := m.encodePrivate()
	if err != nil {
		return nil
	}
	state := &tfprotov6.DynamicValue{MsgPack: sent}
	if !s.unchanged(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: m.Type, PriorState: state, ProposedNewState: state, Config: config, PriorPrivate: private,
	}) {
		return nil
	}
	return &planMarker{ConfigSHA256: stateHash(config.MsgPack), ProviderSHA256: ph}
}
