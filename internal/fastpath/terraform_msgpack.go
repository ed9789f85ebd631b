package fastpath

import (
	"bytes"
	"math"
	"math/big"
	"sort"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
)

// terraformMsgPack encodes v, of type t, byte for byte as Terraform and
// OpenTofu encode a value they send to a provider: go-cty's
// msgpack.Marshal (zclconf/go-cty v1.18.1 cty/msgpack/marshal.go, Marshal
// and marshal), which the read marker's state hash is computed over
// (readMarker.StateSHA256: a ReadResource hashes the bytes it was sent).
// The framework's own encoding (tftypes' MarshalMsgPack) differs: map
// entries in Go's random order, set elements in the order it holds them.
//
// What go-cty does, and this mirrors:
//   - integers that fit int64 in the smallest msgpack int; other numbers as float64 when exact, else as
//     their decimal text; infinities as float64 (UseCompactFloats(false));
//   - object attributes and map entries sorted by name (sort.Strings;
//     cty's map iterator is ordered by key);
//   - set elements in cty's set order (cty/set_internals.go setRules.Less):
//     strings lexically, numbers by value, false before true, nulls last.
//     The order of sets of anything else is cty's hash order, not mirrored:
//     such a set with more than one element makes ok false;
//   - null as msgpack nil.
//
// ok is false for what is not mirrored (unknown values, which a state
// never holds, dynamic values, the sets above). Anything this gets wrong
// costs speed, never correctness: a state hash that does not match the
// bytes Terraform later sends makes the read go to the framework.
func terraformMsgPack(v tftypes.Value, t tftypes.Type) ([]byte, bool) {
	return encodeAsTerraform(0, func(enc *msgpack.Encoder) bool { return encodeTerraform(enc, v, t) })
}

// encodeAsTerraform is what encode writes on a msgpack encoder set up as
// Terraform's (go-cty's): integers in their most compact form, every
// other number a float64. size is a guess of the length; ok is encode's.
func encodeAsTerraform(size int, encode func(*msgpack.Encoder) bool) ([]byte, bool) {
	var buf bytes.Buffer
	buf.Grow(size)
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(false)
	if !encode(enc) {
		return nil, false
	}
	return buf.Bytes(), true
}

func encodeTerraform(enc *msgpack.Encoder, v tftypes.Value, t tftypes.Type) bool {
	if !v.IsKnown() {
		return false
	}
	if v.IsNull() {
		return enc.EncodeNil() == nil
	}
	switch tt := t.(type) {
	case tftypes.List:
		return encodeArray(enc, v, func(int) tftypes.Type { return tt.ElementType })
	case tftypes.Tuple:
		return encodeArray(enc, v, func(i int) tftypes.Type {
			if i < len(tt.ElementTypes) {
				return tt.ElementTypes[i]
			}
			return nil
		})
	case tftypes.Set:
		var elems []tftypes.Value
		if v.As(&elems) != nil || !sortSet(elems, tt.ElementType) || enc.EncodeArrayLen(len(elems)) != nil {
			return false
		}
		for _, e := range elems {
			if !encodeTerraform(enc, e, tt.ElementType) {
				return false
			}
		}
		return true
	case tftypes.Map:
		var m map[string]tftypes.Value
		if v.As(&m) != nil {
			return false
		}
		return encodeSorted(enc, m, func(string) tftypes.Type { return tt.ElementType })
	case tftypes.Object:
		var m map[string]tftypes.Value
		if v.As(&m) != nil || len(m) != len(tt.AttributeTypes) {
			return false
		}
		return encodeSorted(enc, m, func(k string) tftypes.Type { return tt.AttributeTypes[k] })
	}
	switch {
	case t.Is(tftypes.String):
		var s string
		return v.As(&s) == nil && enc.EncodeString(s) == nil
	case t.Is(tftypes.Bool):
		var b bool
		return v.As(&b) == nil && enc.EncodeBool(b) == nil
	case t.Is(tftypes.Number):
		var n big.Float
		return v.As(&n) == nil && encodeNumber(enc, &n)
	}
	// DynamicPseudoType: cty wraps the value with its type; not mirrored.
	return false
}

// encodeArray writes the elements of a list or tuple, element i of the
// type typeOf(i).
func encodeArray(enc *msgpack.Encoder, v tftypes.Value, typeOf func(int) tftypes.Type) bool {
	var elems []tftypes.Value
	if v.As(&elems) != nil || enc.EncodeArrayLen(len(elems)) != nil {
		return false
	}
	for i, e := range elems {
		et := typeOf(i)
		if et == nil || !encodeTerraform(enc, e, et) {
			return false
		}
	}
	return true
}

// encodeNumber is go-cty's marshal of a cty.Number.
func encodeNumber(enc *msgpack.Encoder, n *big.Float) bool {
	if n.IsInf() {
		return enc.EncodeFloat64(math.Inf(n.Sign())) == nil
	}
	if iv, acc := n.Int64(); acc == big.Exact {
		return enc.EncodeInt(iv) == nil
	}
	if fv, acc := n.Float64(); acc == big.Exact && !n.IsInt() {
		return enc.EncodeFloat64(fv) == nil
	}
	return enc.EncodeString(n.Text('f', -1)) == nil
}

// encodeSorted writes m as a msgpack map with its keys sorted, each value
// of the type typeOf gives for its key.
func encodeSorted(enc *msgpack.Encoder, m map[string]tftypes.Value, typeOf func(string) tftypes.Type) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if enc.EncodeMapLen(len(keys)) != nil {
		return false
	}
	for _, k := range keys {
		t := typeOf(k)
		if t == nil || enc.EncodeString(k) != nil || !encodeTerraform(enc, m[k], t) {
			return false
		}
	}
	return true
}

// sortSet puts elems (of type et) in cty's set order; false when that
// order is cty's hash order (see terraformMsgPack).
func sortSet(elems []tftypes.Value, et tftypes.Type) bool {
	if len(elems) < 2 {
		return true
	}
	var less func(a, b tftypes.Value) bool
	switch {
	case et.Is(tftypes.String):
		less = func(a, b tftypes.Value) bool {
			var x, y string
			_ = a.As(&x)
			_ = b.As(&y)
			return x < y
		}
	case et.Is(tftypes.Number):
		less = func(a, b tftypes.Value) bool {
			var x, y big.Float
			_ = a.As(&x)
			_ = b.As(&y)
			return x.Cmp(&y) < 0
		}
	case et.Is(tftypes.Bool):
		less = func(a, b tftypes.Value) bool {
			var x, y bool
			_ = a.As(&x)
			_ = b.As(&y)
			return !x && y
		}
	default:
		return false
	}
	for _, e := range elems {
		if !e.IsKnown() {
			return false
		}
	}
	sort.SliceStable(elems, func(i, j int) bool {
		a, b := elems[i], elems[j]
		switch {
		case a.IsNull() || b.IsNull():
			// Nulls sort after everything else.
			return !a.IsNull() && b.IsNull()
		}
		return less(a, b)
	})
	return true
}
