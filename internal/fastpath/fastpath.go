// Package fastpath answers these protocol calls in front of
// terraform-plugin-framework's protocol 6 server when their answer is
// already known, and hands every other call to the framework unchanged:
//
//   - PlanResourceChange of a resource that does not change: the proposed
//     new state is the prior state (the same bytes), there is no prior
//     private state, the schema's defaults keep every value, and the
//     resource's own ModifyPlan, called as the framework calls it, changes
//     nothing and says nothing. The answer is the prior state.
//   - PlanResourceChange of a create (null prior state): the planned state
//     the framework would make (defaults, computed attributes unknown),
//     computed with a precomputed index of the schema, when every plan
//     modifier of the type does nothing without prior state and the
//     resource's own ModifyPlan, called as the framework calls it, says
//     nothing; see create.go.
//   - PlanResourceChange of an in-place update (prior and proposed state,
//     not the same bytes): defaults, unknown marking when the plan differs
//     from the prior state, the schema's top-level UseStateForUnknown, as
//     the framework makes them, when every other plan modifier of the type
//     is known to do nothing on an unchanged value and its value is
//     unchanged (a replacement is always the framework's), and the
//     resource's own ModifyPlan says nothing; see update.go.
//   - PlanResourceChange of a destroy: the null plan, when the resource's
//     own ModifyPlan, called as the framework calls it, says nothing and
//     leaves it null; see destroy.go.
//   - PlanResourceChange of a resource an apply left a plan marker for:
//     the same state (prior and proposed), configuration, provider
//     configuration and binary as the apply showed the unchanged plan
//     above answers; the answer is the prior state, nothing decoded; see
//     plan.go.
//   - UpgradeResourceState of a state already at the schema's version: the
//     framework's own pass-through (decode the stored JSON against the
//     schema's type, encode it again), as one transcoding of the JSON
//     into msgpack; see upgrade.go.
//   - ReadResource of an object that did not change since a refresh that
//     answered the state it was given, or since a create or update whose
//     new state the resource's Read gives back unchanged: that call left a
//     read marker in the private state (object uid and resourceVersion, a
//     hash of the state, field manager, build ID); one GET shows the object
//     unchanged, and the answer is the state and private state as they
//     are; see read.go and apply.go.
//   - ValidateResourceConfig: the resource's Configure, ConfigValidators
//     and ValidateConfig called as the framework calls them, then the
//     framework's schema walk mirrored over a precomputed index of the
//     schema, converting values only where a validator needs them; see
//     validate.go.
//
// Why: for a no-change plan the framework converts the configuration, the
// prior and the proposed state of the whole schema into its values several
// times, walks every attribute for defaults, unknown marking and plan
// modifiers, and encodes the result, only to return what it was given. For
// a sandbox template (a pod template schema of several hundred nested
// attributes) that was about 85 % of a no-change plan's CPU.
//
// Why it is safe: everything the framework would do that the fast path
// skips is shown to be a no-op before the fast path answers, and anything
// else goes to the framework:
//
//   - defaults: the framework sets every attribute whose configuration is
//     null to its default; defaultsKept checks that each of those already
//     holds it (an attribute changed out of band and refreshed into the
//     state is a change, answered by the framework);
//   - unknown marking of computed attributes happens only when the plan
//     differs from the prior state;
//   - attribute plan modifiers: a type qualifies only when every one is
//     known to do nothing on an unchanged value (the framework's
//     UseStateForUnknown and RequiresReplace*, or a modifier of the
//     provider's marked InertWhenUnchanged); write-only attributes,
//     dynamic attributes, defaults inside sets, non-constant defaults and
//     resource identities disqualify a type;
//   - the resource's ModifyPlan runs, on a resource configured with the
//     provider's data, and any diagnostic (warnings included), replacement,
//     deferral, private-state write or planned value it produces sends the
//     request to the framework, which then runs it again as usual;
//   - creates, updates and destroys the fast path cannot show (create.go,
//     update.go, destroy.go), prior private state (import markers, a
//     claim's last applied values, a node pool's etag) other than a lone
//     read marker (read.go), and an unconfigured provider all go to the
//     framework; the planned private state is the prior one, as the
//     framework plans it. (A
//     provider whose Configure defers must not use the fast path; this
//     provider's never does.)
package fastpath

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// FrameworkServer is what providerserver.NewProtocol6 returns: every
// protocol 6 service the framework implements.
type FrameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

// Counts of the calls answered by the fast path and handed to the
// framework, process-wide (for benchmarks: see internal/selfstats).
var (
	plansAnswered    atomic.Int64
	plansDelegated   atomic.Int64
	upgradesAnswered atomic.Int64
)

// Counts returns how many plans the fast path answered, how many it handed
// to the framework, and how many state upgrades it answered.
func Counts() (plansFast, plansFramework, upgradesFast int64) {
	return plansAnswered.Load(), plansDelegated.Load(), upgradesAnswered.Load()
}

// Server is the framework's server with the fast path in front.
type Server struct {
	FrameworkServer

	providerTypeName string
	factories        []func() resource.Resource
	providerData     func() (any, bool)

	once  sync.Once
	types map[string]*lazyTypeInfo

	// configured is set once ConfigureProvider succeeded. (A provider
	// whose Configure defers, which makes the framework answer every plan
	// deferred, must not use the fast path: this provider's never does.)
	configured atomic.Bool
	// configureState says what the framework hands resources as provider
	// data (validate.go): nothing yet, providerData's, or unknown after a
	// failed ConfigureProvider.
	configureState atomic.Int32
	// providerHash is the hash of the provider configuration of the last
	// ConfigureProvider that succeeded, "" otherwise (plan.go).
	providerHash atomic.Pointer[string]
}

// New puts the fast path in front of fw. providerTypeName and factories are
// the provider's (provider.Metadata's TypeName and Resources);
// providerData returns what the provider's Configure handed to resources
// (resp.ResourceData), and false until it has run.
func New(fw FrameworkServer, providerTypeName string, factories []func() resource.Resource, providerData func() (any, bool)) *Server {
	return &Server{FrameworkServer: fw, providerTypeName: providerTypeName, factories: factories, providerData: providerData}
}

// lazyTypeInfo is a type's typeInfo, built on the first call that needs
// it: a process answers the calls of a few types (a plan's validation
// process only those of the configuration's blocks), and building the
// indexes of all eight took 3.5-6.5 ms of every process's start-up, the
// template's and the sandbox's about 1.5 ms each.
type lazyTypeInfo struct {
	factory func() resource.Resource
	once    sync.Once
	info    *typeInfo
}

func (s *Server) typeInfo(ctx context.Context, typeName string) *typeInfo {
	s.once.Do(func() {
		s.types = map[string]*lazyTypeInfo{}
		for _, f := range s.factories {
			var m resource.MetadataResponse
			f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: s.providerTypeName}, &m)
			s.types[m.TypeName] = &lazyTypeInfo{factory: f}
		}
	})
	lt := s.types[typeName]
	if lt == nil {
		return nil
	}
	lt.once.Do(func() { lt.info = newTypeInfo(ctx, lt.factory) })
	return lt.info
}

// tally counts the calls of one kind the fast path answered and those it
// handed to the framework.
type tally struct{ answered, delegated atomic.Int64 }

func (t *tally) counts() (fast, framework int64) { return t.answered.Load(), t.delegated.Load() }

// plan counts a plan of t's kind that the fast path answered (ok; a plan
// answered too) or handed to the framework, and passes its answer on.
func (t *tally) plan(resp *tfprotov6.PlanResourceChangeResponse, ok bool) (*tfprotov6.PlanResourceChangeResponse, bool) {
	if ok {
		plansAnswered.Add(1)
		t.answered.Add(1)
	} else {
		t.delegated.Add(1)
	}
	return resp, ok
}

// eligible is what of reports of typeName's schema: whether calls of one
// kind may be answered by the fast path, and if not, why.
func (s *Server) eligible(ctx context.Context, typeName string, of func(*typeInfo) (bool, string)) (bool, string) {
	ti := s.typeInfo(ctx, typeName)
	if ti == nil {
		return false, "unknown resource type"
	}
	return of(ti)
}

// Eligible reports whether unchanged plans of typeName may be answered by
// the fast path, and if not, why.
func (s *Server) Eligible(ctx context.Context, typeName string) (bool, string) {
	return s.eligible(ctx, typeName, func(ti *typeInfo) (bool, string) { return ti.planOK, ti.why })
}

func (s *Server) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	resp, err := s.FrameworkServer.ConfigureProvider(ctx, req)
	ok := err == nil && resp != nil
	if ok {
		for _, d := range resp.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityError {
				ok = false
			}
		}
	}
	s.configureHash(req, ok)
	s.configured.Store(ok)
	if ok {
		s.configureState.Store(configureOK)
	} else {
		s.configureState.Store(configureFailed)
	}
	return resp, err
}

func (s *Server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	defer callStarted()()
	if req != nil && s.plannedByMarker(req) {
		plansAnswered.Add(1)
		plansByMarker.Add(1)
		return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate}, nil
	}
	if req != nil && s.unchanged(ctx, req) {
		plansAnswered.Add(1)
		// The framework plans the prior private state as it is (a read
		// marker is the only one let through here).
		return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.PriorState, PlannedPrivate: req.PriorPrivate}, nil
	}
	if req != nil && isDestroy(req) {
		if resp, ok := s.planDestroy(ctx, req); ok {
			plansAnswered.Add(1)
			destroysAnswered.Add(1)
			return resp, nil
		}
	}
	if req != nil && isCreate(req) {
		if resp, ok := creates.plan(s.planCreate(ctx, req)); ok {
			return resp, nil
		}
	}
	if req != nil && isUpdate(req) {
		if resp, ok := updates.plan(s.planUpdate(ctx, req)); ok {
			return resp, nil
		}
	}
	plansDelegated.Add(1)
	return callFramework(ctx, s.FrameworkServer.PlanResourceChange, req)
}

// unchanged reports whether the framework would plan req's prior state
// as it is, with no diagnostic, replacement, private state or deferral.
func (s *Server) unchanged(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) bool {
	if req.PriorState == nil || req.ProposedNewState == nil || req.Config == nil ||
		(len(req.PriorPrivate) > 0 && !onlyReadMarker(req.PriorPrivate)) || req.PriorIdentity != nil {
		return false
	}
	// Terraform and OpenTofu encode equal values alike (cty's msgpack
	// sorts object attributes, map keys and set elements), so an
	// unchanged resource comes with equal bytes, and a changed one is
	// handed on without decoding anything.
	prior := req.PriorState.MsgPack
	if len(prior) == 0 || !bytes.Equal(prior, req.ProposedNewState.MsgPack) || len(req.Config.MsgPack) == 0 {
		return false
	}
	ti, data, ok := s.planType(ctx, req.TypeName, func(ti *typeInfo) bool { return ti.planOK })
	if !ok {
		return false
	}
	priorV, err := req.PriorState.Unmarshal(ti.tfType)
	if err != nil || priorV.IsNull() || !priorV.IsFullyKnown() {
		return false
	}
	configV, err := req.Config.Unmarshal(ti.tfType)
	if err != nil || !configV.IsFullyKnown() {
		return false
	}
	if !defaultsKept(ti.defaults, priorV, configV) {
		return false
	}
	// Private stays nil (see modifyPlan): the framework would pass an
	// empty private state, or one holding only the read marker, a key no
	// resource reads.
	planned, ok := modifyPlan(ctx, ti, data, req.ClientCapabilities, configV, priorV, priorV.Copy())
	return ok && planned.Equal(priorV)
}

// modifyPlan runs the resource's own ModifyPlan on plan as the framework
// runs it (on a resource configured with the provider's data) and returns
// the plan it leaves; ok is false when Configure or ModifyPlan says
// anything (warnings included), asks for a replacement, defers, writes
// private state or an identity: the framework must then answer.
//
// Private stays nil: a read finds nothing, as in the empty private state
// the framework would pass, and a write fails.
func modifyPlan(ctx context.Context, ti *typeInfo, data any, caps *tfprotov6.PlanResourceChangeClientCapabilities, config, plan, state tftypes.Value) (tftypes.Value, bool) {
	r, ok := configuredResource(ctx, ti, data)
	if !ok {
		return plan, false
	}
	rm, ok := r.(resource.ResourceWithModifyPlan)
	if !ok {
		return plan, true
	}
	mreq := resource.ModifyPlanRequest{
		ClientCapabilities: resource.ModifyPlanClientCapabilities{DeferralAllowed: caps != nil && caps.DeferralAllowed},
		Config:             tfsdk.Config{Raw: config, Schema: ti.schema},
		Plan:               tfsdk.Plan{Raw: plan, Schema: ti.schema},
		State:              tfsdk.State{Raw: state, Schema: ti.schema},
	}
	mresp := resource.ModifyPlanResponse{Plan: mreq.Plan, RequiresReplace: path.Paths{}}
	rm.ModifyPlan(ctx, mreq, &mresp)
	if len(mresp.Diagnostics) > 0 || len(mresp.RequiresReplace) > 0 || mresp.Deferred != nil ||
		mresp.Private != nil || mresp.Identity != nil {
		return plan, false
	}
	return mresp.Plan.Raw, true
}

// configuredResource is a new resource of the type, configured with the
// provider's data as the framework configures the resource of every call;
// ok is false when Configure says anything (warnings included).
func configuredResource(ctx context.Context, ti *typeInfo, data any) (resource.Resource, bool) {
	r := ti.factory()
	if rc, ok := r.(resource.ResourceWithConfigure); ok {
		var cresp resource.ConfigureResponse
		rc.Configure(ctx, resource.ConfigureRequest{ProviderData: data}, &cresp)
		if len(cresp.Diagnostics) > 0 {
			return r, false
		}
	}
	return r, true
}
