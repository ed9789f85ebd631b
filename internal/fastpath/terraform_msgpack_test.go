package fastpath_test

import (
	"bytes"
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The read marker an apply writes hashes the new state as Terraform will
// send it back, which is go-cty's msgpack encoding (Terraform and OpenTofu
// decode the provider's answer into a cty value and encode it with
// cty/msgpack.Marshal for the next call). These tests compare
// fastpath.TerraformMsgPack with go-cty's own Marshal byte for byte: on
// random values of every resource type of the provider, and on synthetic
// types covering what the schemas do not (sets, tuples, edge numbers).

func TestTerraformMsgPack_sameBytesAsGoCty_providerTypes(t *testing.T) {
	for _, rt := range providerResourceTypes(t) {
		t.Run(rt.name, func(t *testing.T) {
			checkRandomValues(t, rt.typ, 150)
		})
	}
}

// namedType is a resource type of the provider and its schema's type.
type namedType struct {
	name string
	typ  tftypes.Type
}

// providerResourceTypes returns every resource type of the provider, by
// name, with the type of its schema as the framework serves it.
func providerResourceTypes(t *testing.T) []namedType {
	t.Helper()
	fw := providerserver.NewProtocol6(provider.New("test")())()
	resp, err := fw.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]namedType, 0, len(resp.ResourceSchemas))
	for name, s := range resp.ResourceSchemas {
		out = append(out, namedType{name: name, typ: s.ValueType()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if len(out) < 8 {
		t.Fatalf("only %d resource types: %v", len(out), out)
	}
	return out
}

func TestTerraformMsgPack_sameBytesAsGoCty_syntheticTypes(t *testing.T) {
	for _, typ := range []tftypes.Type{
		tftypes.String, tftypes.Number, tftypes.Bool,
		tftypes.List{ElementType: tftypes.Number},
		tftypes.Set{ElementType: tftypes.String},
		tftypes.Set{ElementType: tftypes.Number},
		tftypes.Set{ElementType: tftypes.Bool},
		tftypes.Map{ElementType: tftypes.Map{ElementType: tftypes.String}},
		tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Number, tftypes.List{ElementType: tftypes.Bool}}},
		tftypes.Object{AttributeTypes: map[string]tftypes.Type{
			"b": tftypes.Set{ElementType: tftypes.Number}, "a": tftypes.Map{ElementType: tftypes.Number},
			"Z": tftypes.String, "aa": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{"x": tftypes.Number}}},
		}},
	} {
		t.Run(typ.String(), func(t *testing.T) {
			checkRandomValues(t, typ, 400)
		})
	}
}

func TestTerraformMsgPack_numbers(t *testing.T) {
	huge, _, err := big.ParseFloat("123456789012345678901234567890", 10, 512, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	fraction, _, err := big.ParseFloat("0.1", 10, 512, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*big.Float{
		big.NewFloat(0), big.NewFloat(1), big.NewFloat(-1), big.NewFloat(127), big.NewFloat(128), big.NewFloat(-32),
		big.NewFloat(-33), big.NewFloat(255), big.NewFloat(256), big.NewFloat(65535), big.NewFloat(65536),
		big.NewFloat(1 << 31), big.NewFloat(1 << 32), big.NewFloat(1<<53 + 1), big.NewFloat(math.MaxInt64),
		big.NewFloat(math.MinInt64), big.NewFloat(0.5), big.NewFloat(-1.25), big.NewFloat(1e300),
		huge, fraction, new(big.Float).SetInf(false), new(big.Float).SetInf(true),
	} {
		checkSame(t, tftypes.NewValue(tftypes.Number, n), tftypes.Number)
	}
}

// Sets of anything but strings, numbers and bools are in cty's hash
// order, which is not mirrored: refused (the apply is then not marked),
// never encoded in another order.
func TestTerraformMsgPack_refusesWhatItDoesNotMirror(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"x": tftypes.String}}
	set := tftypes.Set{ElementType: obj}
	two := tftypes.NewValue(set, []tftypes.Value{
		tftypes.NewValue(obj, map[string]tftypes.Value{"x": tftypes.NewValue(tftypes.String, "a")}),
		tftypes.NewValue(obj, map[string]tftypes.Value{"x": tftypes.NewValue(tftypes.String, "b")}),
	})
	if _, ok := fastpath.TerraformMsgPack(two, set); ok {
		t.Error("a set of two objects was encoded")
	}
	one := tftypes.NewValue(set, []tftypes.Value{
		tftypes.NewValue(obj, map[string]tftypes.Value{"x": tftypes.NewValue(tftypes.String, "a")}),
	})
	checkSame(t, one, set)
	if _, ok := fastpath.TerraformMsgPack(tftypes.NewValue(tftypes.String, tftypes.UnknownValue), tftypes.String); ok {
		t.Error("an unknown value was encoded")
	}
	dyn := tftypes.NewValue(tftypes.String, "x")
	if _, ok := fastpath.TerraformMsgPack(dyn, tftypes.DynamicPseudoType); ok {
		t.Error("a dynamic value was encoded")
	}
}

func checkRandomValues(t *testing.T, typ tftypes.Type, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, uint64(len(typ.String()))))
	encoded := 0
	for i := 0; i < n; i++ {
		v := pt.RandomValue(r, typ, false)
		if checkSame(t, v, typ) {
			encoded++
		}
		if t.Failed() {
			return
		}
	}
	if encoded < n/2 {
		t.Errorf("only %d of %d random values encoded", encoded, n)
	}
}

// checkSame requires TerraformMsgPack(v) to be go-cty's bytes, or to refuse
// only a value holding a set cty orders by hash.
func checkSame(t *testing.T, v tftypes.Value, typ tftypes.Type) bool {
	t.Helper()
	got, ok := fastpath.TerraformMsgPack(v, typ)
	if !ok {
		if !hasHashOrderedSet(v, typ) {
			t.Errorf("refused a value cty orders deterministically: %v", v)
		}
		return false
	}
	cv := toCty(t, v, typ)
	want, err := ctymsgpack.Marshal(cv, toCtyType(typ))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("value %v:\n got  %x\n want %x", v, got, want)
	}
	// And the framework decodes it to a value encoded alike (numbers that
	// are neither int64 nor exact float64 come back with another
	// precision, so the values are not compared with Equal).
	back, err := (&tfprotov6.DynamicValue{MsgPack: got}).Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if again, ok := fastpath.TerraformMsgPack(back, typ); !ok || !bytes.Equal(again, got) {
		t.Errorf("value %v decoded and encoded again: %x", v, again)
	}
	return true
}

func hasHashOrderedSet(v tftypes.Value, typ tftypes.Type) bool {
	found := false
	_ = tftypes.Walk(v, func(_ *tftypes.AttributePath, x tftypes.Value) (bool, error) {
		if s, ok := x.Type().(tftypes.Set); ok && !x.IsNull() {
			var elems []tftypes.Value
			_ = x.As(&elems)
			et := s.ElementType
			if len(elems) > 1 && !et.Is(tftypes.String) && !et.Is(tftypes.Number) && !et.Is(tftypes.Bool) {
				found = true
			}
		}
		return !found, nil
	})
	return found
}

func toCtyType(typ tftypes.Type) cty.Type {
	switch tt := typ.(type) {
	case tftypes.Object:
		attrs := map[string]cty.Type{}
		for k, at := range tt.AttributeTypes {
			attrs[k] = toCtyType(at)
		}
		if len(tt.OptionalAttributes) > 0 {
			panic("optional attributes")
		}
		return cty.Object(attrs)
	case tftypes.Map:
		return cty.Map(toCtyType(tt.ElementType))
	case tftypes.List:
		return cty.List(toCtyType(tt.ElementType))
	case tftypes.Set:
		return cty.Set(toCtyType(tt.ElementType))
	case tftypes.Tuple:
		var ets []cty.Type
		for _, et := range tt.ElementTypes {
			ets = append(ets, toCtyType(et))
		}
		return cty.Tuple(ets)
	}
	switch {
	case typ.Is(tftypes.String):
		return cty.String
	case typ.Is(tftypes.Number):
		return cty.Number
	case typ.Is(tftypes.Bool):
		return cty.Bool
	}
	return cty.DynamicPseudoType
}

func toCty(t *testing.T, v tftypes.Value, typ tftypes.Type) cty.Value {
	t.Helper()
	ct := toCtyType(typ)
	if v.IsNull() {
		return cty.NullVal(ct)
	}
	switch tt := typ.(type) {
	case tftypes.Object:
		var m map[string]tftypes.Value
		must(t, v.As(&m))
		attrs := map[string]cty.Value{}
		for k, at := range tt.AttributeTypes {
			attrs[k] = toCty(t, m[k], at)
		}
		return cty.ObjectVal(attrs)
	case tftypes.Map:
		var m map[string]tftypes.Value
		must(t, v.As(&m))
		if len(m) == 0 {
			return cty.MapValEmpty(toCtyType(tt.ElementType))
		}
		elems := map[string]cty.Value{}
		for k, e := range m {
			elems[k] = toCty(t, e, tt.ElementType)
		}
		return cty.MapVal(elems)
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var l []tftypes.Value
		must(t, v.As(&l))
		var elems []cty.Value
		for i, e := range l {
			var et tftypes.Type
			switch tt := typ.(type) {
			case tftypes.List:
				et = tt.ElementType
			case tftypes.Set:
				et = tt.ElementType
			case tftypes.Tuple:
				et = tt.ElementTypes[i]
			}
			elems = append(elems, toCty(t, e, et))
		}
		switch tt := typ.(type) {
		case tftypes.List:
			if len(elems) == 0 {
				return cty.ListValEmpty(toCtyType(tt.ElementType))
			}
			return cty.ListVal(elems)
		case tftypes.Set:
			if len(elems) == 0 {
				return cty.SetValEmpty(toCtyType(tt.ElementType))
			}
			return cty.SetVal(elems)
		}
		if len(elems) == 0 {
			return cty.EmptyTupleVal
		}
		return cty.TupleVal(elems)
	}
	switch {
	case typ.Is(tftypes.String):
		var s string
		must(t, v.As(&s))
		return cty.StringVal(s)
	case typ.Is(tftypes.Number):
		var n big.Float
		must(t, v.As(&n))
		return cty.NumberVal(&n)
	case typ.Is(tftypes.Bool):
		var b bool
		must(t, v.As(&b))
		return cty.BoolVal(b)
	}
	t.Fatalf("no cty value for %s", typ)
	return cty.NilVal
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
