package fastpath

import (
	"bytes"
	"context"
	"maps"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The plan of an in-place update (prior and proposed state both present,
// not the same bytes), as the framework makes it
// (terraform-plugin-framework v1.19.0,
// internal/fwserver/server_planresourcechange.go):
//
//  1. the proposed new state is the plan (:153);
//  2. defaults (:161-177): the create index's walk without unknown
//     marking (planObject with mark false);
//  3. write-only attributes are nulled (:180): a type with any is not
//     eligible (nor for creates);
//  4. only when the result differs from the prior state, unknown marking
//     (:199-268): the create index's walk with marking, which is the
//     framework's defaults pass followed by its marking pass (create.go);
//  5. the schema's plan modifiers (:275-303). On a top-level attribute, the
//     framework's UseStateForUnknown is applied as it is written
//     (stringplanmodifier/use_state_for_unknown.go:43-60, alike for every
//     kind: with prior state, an unknown planned value whose configuration
//     is not unknown becomes the prior value). Every other modifier must be
//     one that does nothing while its attribute's planned value equals the
//     prior value: the framework's RequiresReplace and RequiresReplaceIf
//     (requires_replace_if.go:53-66), the provider's own marked
//     InertWhenUnchanged, and below the top level also UseStateForUnknown
//     (a state holds no unknown value); any other modifier, or one on a
//     block itself, leaves the type to the framework. A planned top-level
//     value that differs from the prior value under one of those, or above
//     one below the top level (guard), sends the request to the framework:
//     a replacement is always the framework's answer;
//  6. the resource's ModifyPlan (:313-372), run as the framework runs it
//     (modifyPlan): any diagnostic, replacement, deferral, private state
//     or identity sends the request to the framework.
//
// The framework's debug logs of the changed top-level attributes
// (:204-245) are not written. As for the other plans, the prior private
// state must be empty or hold only the read marker, and the answer's
// private state is the prior one, as the framework plans it (:141-151).
// Whatever the fast path cannot show goes to the framework as before.

var updates tally

// UpdateCounts returns how many plans of an in-place update the fast path
// answered and how many it handed to the framework (both are also in
// Counts).
func UpdateCounts() (fast, framework int64) { return updates.counts() }

// EligibleUpdate reports whether plans of updates of typeName may be
// answered by the fast path, and if not, why.
func (s *Server) EligibleUpdate(ctx context.Context, typeName string) (bool, string) {
	return s.eligible(ctx, typeName, func(ti *typeInfo) (bool, string) { return ti.updateWhy == "", ti.updateWhy })
}

// useStateForUnknown are the types of the framework's UseStateForUnknown
// modifiers, of every kind.
var useStateForUnknown = typesOf(
	boolplanmodifier.UseStateForUnknown(), float64planmodifier.UseStateForUnknown(),
	int64planmodifier.UseStateForUnknown(), listplanmodifier.UseStateForUnknown(),
	mapplanmodifier.UseStateForUnknown(), objectplanmodifier.UseStateForUnknown(),
	setplanmodifier.UseStateForUnknown(), stringplanmodifier.UseStateForUnknown(),
)

// umod is what the plan modifiers of a top-level attribute or block do to
// an update: its own, in their order (keepPrior: UseStateForUnknown; the
// others do nothing while the value is unchanged), and, when guard is
// set, modifiers below it that do nothing while it is unchanged.
type umod struct {
	attr      string
	keepPrior []bool
	guard     bool
}

// updateIndex returns the top-level attributes and blocks with plan
// modifiers at or below them and what those do, or why updates of the
// schema are left to the framework. createWhy is the create index's
// refusal: what the create walk cannot plan, the update walk cannot
// either.
func updateIndex(s schema.Schema, createWhy string) ([]umod, string) {
	if createWhy != "" {
		return nil, createWhy
	}
	var out []umod
	for name, a := range s.Attributes {
		m := umod{attr: name}
		list := reflect.ValueOf(planModifiers(a))
		for i := 0; list.Kind() == reflect.Slice && i < list.Len(); i++ {
			mod := list.Index(i).Interface()
			switch {
			case useStateForUnknown[reflect.TypeOf(mod)]:
				m.keepPrior = append(m.keepPrior, true)
			case inertWhenUnchanged(mod):
				m.keepPrior = append(m.keepPrior, false)
			default:
				return nil, name + ": plan modifier " + reflect.TypeOf(mod).String()
			}
		}
		var why string
		if n, ok := a.(schema.NestedAttribute); ok {
			m.guard, why = nestedModifiers(n.GetNestedObject().GetAttributes(), map[string]schema.Block(nil), name)
		}
		if why != "" {
			return nil, why
		}
		if len(m.keepPrior) > 0 || m.guard {
			out = append(out, m)
		}
	}
	for name, b := range s.Blocks {
		m := umod{attr: name}
		var why string
		if list := reflect.ValueOf(blockPlanModifiers(b)); list.Kind() == reflect.Slice && list.Len() > 0 {
			return nil, name + ": block plan modifier"
		}
		o := b.GetNestedObject()
		if m.guard, why = nestedModifiers(o.GetAttributes(), o.GetBlocks(), name); why != "" {
			return nil, why
		}
		if m.guard {
			out = append(out, m)
		}
	}
	return out, ""
}

// inertWhenUnchanged reports a plan modifier known to do nothing while
// its attribute's planned value equals the prior value: the framework's
// RequiresReplace and RequiresReplaceIf, or one of the provider's marked
// InertWhenUnchanged.
func inertWhenUnchanged(mod any) bool {
	_, marked := mod.(InertWhenUnchanged)
	return marked || inertModifiers[reflect.TypeOf(mod)]
}

// nestedModifiers walks the attributes and blocks of a nested object at
// at: guard is true when one of them or anything below them has plan
// modifiers, all inert while unchanged; why says where one is not (or is
// of a kind the walk does not know).
func nestedModifiers[A, B any](attrs map[string]A, blocks map[string]B, at string) (guard bool, why string) {
	for name, a := range attrs {
		p := at + "." + name
		ra, ok := any(a).(schema.Attribute)
		if !ok {
			return false, p + ": attribute of an unknown kind"
		}
		g, why := inertBelow(planModifiers(ra), p)
		if why != "" {
			return false, why
		}
		guard = guard || g
		if n, ok := ra.(schema.NestedAttribute); ok {
			g, why = nestedModifiers(n.GetNestedObject().GetAttributes(), map[string]schema.Block(nil), p)
			if why != "" {
				return false, why
			}
			guard = guard || g
		}
	}
	for name, b := range blocks {
		p := at + "." + name
		rb, ok := any(b).(schema.Block)
		if !ok {
			return false, p + ": block of an unknown kind"
		}
		g, why := inertBelow(blockPlanModifiers(rb), p)
		if why != "" {
			return false, why
		}
		guard = guard || g
		o := rb.GetNestedObject()
		g, why = nestedModifiers(o.GetAttributes(), o.GetBlocks(), p)
		if why != "" {
			return false, why
		}
		guard = guard || g
	}
	return guard, ""
}

// inertBelow checks the plan modifiers list (a slice of modifiers of any
// kind) of an attribute or block at p below the top level: any says
// whether there is one, why says where one is not inert while unchanged.
func inertBelow(list any, p string) (found bool, why string) {
	v := reflect.ValueOf(list)
	for i := 0; v.Kind() == reflect.Slice && i < v.Len(); i++ {
		if mod := v.Index(i).Interface(); !inertWhenUnchanged(mod) {
			return false, p + ": plan modifier " + reflect.TypeOf(mod).String() + " below the top level"
		}
		found = true
	}
	return found, ""
}

// blockPlanModifiers returns a block's own plan modifiers, whatever its
// kind.
func blockPlanModifiers(b schema.Block) any {
	switch b := b.(type) {
	case schema.ListNestedBlock:
		return b.PlanModifiers
	case schema.SetNestedBlock:
		return b.PlanModifiers
	case schema.SingleNestedBlock:
		return b.PlanModifiers
	}
	return nil
}

// isUpdate reports whether req plans an in-place change of an existing
// object: prior and proposed state present, not the same bytes (those are
// unchanged plans, see unchanged), without decoding anything.
func isUpdate(req *tfprotov6.PlanResourceChangeRequest) bool {
	return req.PriorState != nil && req.ProposedNewState != nil && len(req.PriorState.JSON) == 0 &&
		len(req.ProposedNewState.JSON) == 0 && !isCreate(req) && !isDestroy(req) &&
		!bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack)
}

// planUpdate returns the framework's answer to the plan of an in-place
// update, when it can show what it is.
func (s *Server) planUpdate(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	if req.Config == nil || req.PriorIdentity != nil || (len(req.PriorPrivate) > 0 && !onlyReadMarker(req.PriorPrivate)) {
		return nil, false
	}
	ti, data, ok := s.planType(ctx, req.TypeName, func(ti *typeInfo) bool { return ti.updateWhy == "" })
	if !ok {
		return nil, false
	}
	prior, ok1 := knownValue(req.PriorState, ti.tfType)
	proposed, ok2 := knownValue(req.ProposedNewState, ti.tfType)
	config, ok3 := knownValue(req.Config, ti.tfType)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	planned, _, ok := planObject(ti.create, proposed, config, true, false)
	if !ok {
		return nil, false
	}
	if !planned.Equal(prior) {
		if planned, _, ok = planObject(ti.create, proposed, config, true, true); !ok {
			return nil, false
		}
	}
	if planned, ok = updateModifiers(ti.update, planned, config, prior); !ok {
		return nil, false
	}
	if planned, ok = modifyPlan(ctx, ti, data, req.ClientCapabilities, config, planned, prior); !ok {
		return nil, false
	}
	return plannedResponse(ti.tfType, planned, req.PriorPrivate)
}

// updateModifiers runs the top-level plan modifiers of an update (step 5
// above) on planned, the configuration and the prior state, all known
// objects; ok is false when one of them might replace the resource or do
// something else the fast path does not show.
func updateModifiers(mods []umod, planned, config, prior tftypes.Value) (tftypes.Value, bool) {
	if len(mods) == 0 {
		return planned, true
	}
	var pa, ca, sa map[string]tftypes.Value // read only
	if planned.As(&pa) != nil || config.As(&ca) != nil || prior.As(&sa) != nil {
		return planned, false
	}
	var out map[string]tftypes.Value // a copy, once something changes
	for _, m := range mods {
		pv, ok1 := pa[m.attr]
		cv, ok2 := ca[m.attr]
		sv, ok3 := sa[m.attr]
		if !ok1 || !ok2 || !ok3 {
			return planned, false
		}
		if out != nil {
			pv = out[m.attr]
		}
		for _, keepPrior := range m.keepPrior {
			switch {
			case keepPrior:
				if pv.IsKnown() || !cv.IsKnown() {
					continue
				}
				pv = sv
				if out == nil {
					out = maps.Clone(pa)
				}
				out[m.attr] = pv
			case !pv.Equal(sv):
				return planned, false
			}
		}
		if m.guard && !pv.Equal(sv) {
			return planned, false
		}
	}
	if out == nil {
		return planned, true
	}
	return tftypes.NewValue(planned.Type(), out), true
}
