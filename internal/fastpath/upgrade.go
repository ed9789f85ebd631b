package fastpath

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
)

// UpgradeResourceState of a state already at the schema's version.
//
// Terraform stores a state as JSON and, before every plan, refresh or
// apply, asks the provider to upgrade it; at the schema's version the
// framework passes it through: it decodes the JSON into a tftypes.Value
// against the schema's type (tftypes' ValueFromJSONWithOpts, ignoring
// attributes the schema no longer has) and encodes that value as msgpack.
// tftypes decodes by re-reading every nested value's JSON from the start
// at each level (jsonUnmarshal hands json.RawMessage down), so a template's
// state, a few levels deep, is parsed many times over: that was a quarter
// of a no-change plan's CPU. transcodeState decodes the JSON once and
// writes the msgpack directly, with tftypes' rules (below); the result
// decodes to the value the framework's pass-through encodes. Anything it
// does not mirror (dynamic values) or cannot read goes to the framework,
// which reports errors in its words.

func (s *Server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	defer callStarted()()
	if req != nil && req.RawState != nil {
		if ti := s.typeInfo(ctx, req.TypeName); ti != nil && ti.tfType != nil && req.Version == ti.version {
			if len(req.RawState.JSON) > 0 {
				if mp, ok := transcodeState(req.RawState.JSON, ti.tfType); ok {
					upgradesAnswered.Add(1)
					return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &tfprotov6.DynamicValue{MsgPack: mp}}, nil
				}
			}
			v, err := req.RawState.UnmarshalWithOpts(ti.tfType, tfprotov6.UnmarshalOpts{
				ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
			})
			if err == nil {
				if dv, err := tfprotov6.NewDynamicValue(ti.tfType, v); err == nil {
					upgradesAnswered.Add(1)
					return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &dv}, nil
				}
			}
			// The framework reports the error in its words.
		}
	}
	return callFramework(ctx, s.FrameworkServer.UpgradeResourceState, req)
}

// transcodeState converts a stored state (JSON) of type t into msgpack,
// as tftypes would decode it (terraform-plugin-go v0.31.0
// tftypes/value_json.go, with IgnoreUndefinedAttributes):
//   - null is null, of any type;
//   - a string takes a JSON string, number (its text) or bool ("true",
//     "false"); a number a JSON number or string (big.ParseFloat, base 10,
//     512 bits, to nearest even); a bool a JSON bool, the strings "true",
//     "1", "false", "0", or the numbers 1 and 0;
//   - an object's attributes missing from the JSON are null, those the
//     type does not have are ignored, a repeated key keeps its last value;
//     a map likewise; lists, sets and tuples are arrays (a tuple of exactly
//     its types' length);
//   - dynamic values are not transcoded (ok false).
//
// Objects and maps are written with sorted keys and numbers as go-cty
// writes them (terraform_msgpack.go: encodeNumber); Terraform decodes any
// order and any of msgpack's number forms to the same value.
func transcodeState(raw []byte, t tftypes.Type) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return encodeAsTerraform(len(raw), func(enc *msgpack.Encoder) bool { return transcode(enc, v, t) })
}

func transcode(enc *msgpack.Encoder, v any, t tftypes.Type) bool {
	if v == nil {
		return enc.EncodeNil() == nil
	}
	switch tt := t.(type) {
	case tftypes.Object:
		m, ok := v.(map[string]any)
		return ok && transcodeMap(enc, m, slices.Sorted(maps.Keys(tt.AttributeTypes)), func(k string) tftypes.Type { return tt.AttributeTypes[k] })
	case tftypes.Map:
		m, ok := v.(map[string]any)
		return ok && transcodeMap(enc, m, slices.Sorted(maps.Keys(m)), func(string) tftypes.Type { return tt.ElementType })
	case tftypes.List:
		return transcodeArray(enc, v, func(int) tftypes.Type { return tt.ElementType }, -1)
	case tftypes.Set:
		return transcodeArray(enc, v, func(int) tftypes.Type { return tt.ElementType }, -1)
	case tftypes.Tuple:
		return transcodeArray(enc, v, func(i int) tftypes.Type { return tt.ElementTypes[i] }, len(tt.ElementTypes))
	}
	switch {
	case t.Is(tftypes.String):
		switch x := v.(type) {
		case string:
			return enc.EncodeString(x) == nil
		case json.Number:
			return enc.EncodeString(string(x)) == nil
		case bool:
			if x {
				return enc.EncodeString("true") == nil
			}
			return enc.EncodeString("false") == nil
		}
	case t.Is(tftypes.Number):
		var s string
		switch x := v.(type) {
		case json.Number:
			s = string(x)
		case string:
			s = x
		default:
			return false
		}
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		return err == nil && encodeNumber(enc, f)
	case t.Is(tftypes.Bool):
		switch x := v.(type) {
		case bool:
			return enc.EncodeBool(x) == nil
		case string:
			switch x {
			case "true", "1":
				return enc.EncodeBool(true) == nil
			case "false", "0":
				return enc.EncodeBool(false) == nil
			}
		case json.Number:
			switch x {
			case "1":
				return enc.EncodeBool(true) == nil
			case "0":
				return enc.EncodeBool(false) == nil
			}
		}
	}
	// A value of the wrong kind, or a dynamic value.
	return false
}

// transcodeMap writes the entries keys names of m (absent ones as null) as
// a msgpack map in that order, entry k of the type typeOf(k).
func transcodeMap(enc *msgpack.Encoder, m map[string]any, keys []string, typeOf func(string) tftypes.Type) bool {
	if enc.EncodeMapLen(len(keys)) != nil {
		return false
	}
	for _, k := range keys {
		if enc.EncodeString(k) != nil || !transcode(enc, m[k], typeOf(k)) {
			return false
		}
	}
	return true
}

// transcodeArray writes a JSON array as a msgpack array, element i of the
// type typeOf(i); n >= 0 requires exactly n elements (a tuple).
func transcodeArray(enc *msgpack.Encoder, v any, typeOf func(int) tftypes.Type, n int) bool {
	a, ok := v.([]any)
	if !ok || (n >= 0 && len(a) != n) || enc.EncodeArrayLen(len(a)) != nil {
		return false
	}
	for i, e := range a {
		if !transcode(enc, e, typeOf(i)) {
			return false
		}
	}
	return true
}
