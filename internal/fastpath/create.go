package fastpath

import (
	"bytes"
	"context"
	"maps"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The plan of a create (null prior state), as the framework makes it
// (terraform-plugin-framework v1.19.0,
// internal/fwserver/server_planresourcechange.go), with a precomputed index
// of the schema walked once instead of three tftypes.Transform passes that
// look every visited attribute up from the root:
//
//  1. the proposed new state is the plan (:153);
//  2. defaults (:161-177, fwschemadata/data_default.go:23): every attribute
//     with a default whose configuration is null, at any depth, becomes the
//     default; the walk goes children first, so a parent's default replaces
//     whatever its children got;
//  3. write-only attributes are nulled (:180): a type with any is not
//     eligible;
//  4. unknown marking (:200-268, MarkComputedNilsAsUnknown :414-542), on
//     the result of 2, again children first: a computed attribute without a
//     default whose configuration is null becomes unknown; elements of
//     lists, maps and sets, blocks and what lies inside an attribute that
//     is not nested are not attributes of the schema and are left alone.
//     Inside a value set to its default in step 2, the children's
//     configuration is null: computed children without a default of their
//     own become unknown, children with one keep the parent default's value;
//  5. the schema's plan modifiers (:275-303, SchemaModifyPlan): a type
//     qualifies only when every one does nothing without prior state
//     (InertOnCreate), so that the pass rebuilds the same value;
//  6. the resource's ModifyPlan (:313-372), run here as the framework runs
//     it; any diagnostic (warnings included), replacement, deferral,
//     private state or identity sends the request to the framework.
//
// Where the framework's two lookups of the configuration would disagree
// (the defaults pass reads a missing or unknown-parented configuration as
// null, fwschemadata/data_value.go, while unknown marking stops at the last
// value it reached, tftypes.WalkAttributePath), the fast path does not
// answer: a configuration that is unknown above a known planned value, or a
// list, map or set element or map key the configuration lacks.

var creates tally

// CreateCounts returns how many plans of a create the fast path answered
// and how many it handed to the framework (both are also in Counts).
func CreateCounts() (fast, framework int64) { return creates.counts() }

// EligibleCreate reports whether plans of creates of typeName may be
// answered by the fast path, and if not, why.
func (s *Server) EligibleCreate(ctx context.Context, typeName string) (bool, string) {
	return s.eligible(ctx, typeName, func(ti *typeInfo) (bool, string) { return ti.createOK, ti.createWhy })
}

// msgpackNull is a null value in MessagePack, as Terraform encodes the
// prior state of a create.
var msgpackNull = []byte{0xc0}

// isCreate reports whether req plans a create (its prior state is null),
// without decoding anything.
func isCreate(req *tfprotov6.PlanResourceChangeRequest) bool {
	if req.PriorState == nil {
		return true
	}
	return len(req.PriorState.JSON) == 0 && bytes.Equal(req.PriorState.MsgPack, msgpackNull)
}

// planCreate returns the framework's answer to the plan of a create, when
// it can show what it is.
func (s *Server) planCreate(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	if req.ProposedNewState == nil || req.Config == nil || len(req.PriorPrivate) > 0 || req.PriorIdentity != nil {
		return nil, false
	}
	ti, data, ok := s.planType(ctx, req.TypeName, func(ti *typeInfo) bool { return ti.createOK })
	if !ok {
		return nil, false
	}
	proposed, ok1 := knownValue(req.ProposedNewState, ti.tfType)
	config, ok2 := knownValue(req.Config, ti.tfType)
	if !ok1 || !ok2 {
		return nil, false
	}
	planned, _, ok := planObject(ti.create, proposed, config, true, true)
	if !ok {
		return nil, false
	}
	planned, ok = modifyPlan(ctx, ti, data, req.ClientCapabilities, config, planned, tftypes.NewValue(ti.tfType, nil))
	if !ok {
		return nil, false
	}
	return plannedResponse(ti.tfType, planned, nil)
}

// planType returns what every plan the fast path makes starts from: the
// information of req's type, when eligible says plans of this kind of it
// may be answered, and the provider's data. ok is false when the provider
// is not configured, the type is not known or not eligible, or the
// provider's data is not there.
func (s *Server) planType(ctx context.Context, typeName string, eligible func(*typeInfo) bool) (ti *typeInfo, data any, ok bool) {
	if !s.configured.Load() {
		return nil, nil, false
	}
	if ti = s.typeInfo(ctx, typeName); ti == nil || !eligible(ti) {
		return nil, nil, false
	}
	data, ok = s.providerData()
	return ti, data, ok
}

// knownValue decodes dv as a value of t; false when it does not decode,
// is null or is unknown.
func knownValue(dv *tfprotov6.DynamicValue, t tftypes.Type) (tftypes.Value, bool) {
	v, err := dv.Unmarshal(t)
	return v, err == nil && !v.IsNull() && v.IsKnown()
}

// plannedResponse is the answer that plans planned, a value of t, with
// the planned private state private.
func plannedResponse(t tftypes.Type, planned tftypes.Value, private []byte) (*tfprotov6.PlanResourceChangeResponse, bool) {
	dv, err := tfprotov6.NewDynamicValue(t, planned)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: &dv, PlannedPrivate: private}, true
}

// planObject plans the attributes and blocks of one object (the resource,
// a nested attribute's object, a block's) from its proposed value pv,
// known and not null, and its configuration cv, null or known. defaults is
// false inside a value set to its default (only unknown marking is left);
// mark is false for the defaults pass alone (step 2 without step 4, as an
// update plans when the defaults leave the prior state, update.go).
// It returns the planned object, whether it differs from pv, and false
// when the fast path cannot tell the framework's plan.
func planObject(nodes []*cnode, pv, cv tftypes.Value, defaults, mark bool) (tftypes.Value, bool, bool) {
	if len(nodes) == 0 {
		return pv, false, true
	}
	var ca map[string]tftypes.Value // read only
	if !cv.IsNull() {
		if !cv.IsKnown() || cv.As(&ca) != nil {
			return pv, false, false
		}
	}
	var pa map[string]tftypes.Value // pv's own: read only
	if pv.As(&pa) != nil {
		return pv, false, false
	}
	var out map[string]tftypes.Value // a copy, once something changes
	for _, n := range nodes {
		pe, ok := pa[n.name]
		if !ok {
			return pv, false, false
		}
		ce, ok := ca[n.name]
		if !ok {
			if ca != nil {
				return pv, false, false
			}
			ce = tftypes.NewValue(pe.Type(), nil)
		}
		ne, changed, ok := n.plan(pe, ce, defaults, mark)
		if !ok {
			return pv, false, false
		}
		if changed {
			if out == nil {
				out = maps.Clone(pa)
			}
			out[n.name] = ne
		}
	}
	if out == nil {
		return pv, false, true
	}
	return tftypes.NewValue(pv.Type(), out), true, true
}

// plan plans one attribute or block: its proposed value pv and its
// configuration cv (null when a parent's is).
func (n *cnode) plan(pv, cv tftypes.Value, defaults, mark bool) (tftypes.Value, bool, bool) {
	if n.whole && (fraction(pv) || fraction(cv)) {
		// The framework reads it as a value that fails validation.
		return pv, false, false
	}
	v, changed := pv, false
	cvNull := cv.IsNull()
	if !n.block && cvNull {
		if n.def != nil {
			if defaults {
				// Step 2 replaces the value, whatever it got below; step 4
				// then walks the default with a null configuration.
				v, changed, defaults = *n.def, !n.def.Equal(pv), false
			}
		} else if n.computed && mark {
			// Step 4 marks it unknown, whatever it got below.
			u := tftypes.NewValue(pv.Type(), tftypes.UnknownValue)
			return u, !pv.Equal(u), true
		}
	}
	if len(n.children) == 0 || v.IsNull() || !v.IsKnown() {
		return v, changed, true
	}
	if !cvNull && !cv.IsKnown() {
		// The two passes would read the children's configuration
		// differently (null for defaults, unknown for marking).
		return v, false, false
	}
	switch n.nesting {
	case nestSingle:
		nv, c, ok := planObject(n.children, v, cv, defaults, mark)
		return nv, changed || c, ok
	case nestList:
		var pl, cl []tftypes.Value // read only
		if v.As(&pl) != nil {
			return v, false, false
		}
		if !cvNull && (cv.As(&cl) != nil || len(cl) != len(pl)) {
			return v, false, false
		}
		var out []tftypes.Value
		for i, pe := range pl {
			if pe.IsNull() || !pe.IsKnown() {
				continue
			}
			ce := tftypes.NewValue(pe.Type(), nil)
			if !cvNull {
				ce = cl[i]
			}
			ne, c, ok := planObject(n.children, pe, ce, defaults, mark)
			if !ok {
				return v, false, false
			}
			if c {
				if out == nil {
					out = append([]tftypes.Value(nil), pl...)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, changed, true
		}
		return tftypes.NewValue(v.Type(), out), true, true
	case nestMap:
		var pm, cm map[string]tftypes.Value // read only
		if v.As(&pm) != nil {
			return v, false, false
		}
		if !cvNull && cv.As(&cm) != nil {
			return v, false, false
		}
		var out map[string]tftypes.Value
		for k, pe := range pm {
			if pe.IsNull() || !pe.IsKnown() {
				continue
			}
			ce, ok := cm[k]
			if !ok {
				if !cvNull {
					return v, false, false
				}
				ce = tftypes.NewValue(pe.Type(), nil)
			}
			ne, c, ok := planObject(n.children, pe, ce, defaults, mark)
			if !ok {
				return v, false, false
			}
			if c {
				if out == nil {
					out = maps.Clone(pm)
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, changed, true
		}
		return tftypes.NewValue(v.Type(), out), true, true
	}
	// Sets with anything to plan inside are not eligible (schema_create.go).
	return v, false, false
}

// fraction reports a known number with a fractional part.
func fraction(v tftypes.Value) bool {
	if v.IsNull() || !v.IsKnown() || !v.Type().Is(tftypes.Number) {
		return false
	}
	var f *big.Float
	return v.As(&f) != nil || f == nil || !f.IsInt()
}
