package protocoltest

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var randomStrings = []string{
	"", "a", "B", "python-runtime", "é", "日本語", "with space", strings.Repeat("x", 31), strings.Repeat("y", 32),
	strings.Repeat("z", 255), strings.Repeat("w", 256), strings.Repeat("v", 65536),
}

var randomNumbers = []float64{0, 1, -1, 3, 127, 128, -32, -33, 255, 256, 10001, 65535, 65536, 1 << 31, 1 << 40, 0.5, -2.25, 1e300}

// RandomValue returns a random value of typ for equivalence tests: nulls
// at every level, collections of up to a few elements, map keys and
// strings of many lengths (msgpack's size classes included), integers and
// fractions of many sizes; with unknowns, also unknown values at every
// level (as in a configuration or plan). The same r gives the same value.
func RandomValue(r *rand.Rand, typ tftypes.Type, unknowns bool) tftypes.Value {
	return randomValue(r, typ, 0, unknowns)
}

func randomValue(r *rand.Rand, typ tftypes.Type, depth int, unknowns bool) tftypes.Value {
	if unknowns && r.IntN(12) == 0 {
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	if r.IntN(6) == 0 {
		return tftypes.NewValue(typ, nil)
	}
	size := func() int {
		if depth > 3 {
			return r.IntN(2)
		}
		return r.IntN(5)
	}
	switch tt := typ.(type) {
	case tftypes.Object:
		attrs := map[string]tftypes.Value{}
		for k, at := range tt.AttributeTypes {
			attrs[k] = randomValue(r, at, depth+1, unknowns)
		}
		return tftypes.NewValue(typ, attrs)
	case tftypes.Map:
		m := map[string]tftypes.Value{}
		for i, n := 0, size()*3; i < n; i++ {
			m[randomStrings[r.IntN(len(randomStrings)-1)]+fmt.Sprint(r.IntN(50))] = randomValue(r, tt.ElementType, depth+1, unknowns)
		}
		return tftypes.NewValue(typ, m)
	case tftypes.List:
		var l []tftypes.Value
		for i, n := 0, size(); i < n; i++ {
			l = append(l, randomValue(r, tt.ElementType, depth+1, unknowns))
		}
		return tftypes.NewValue(typ, l)
	case tftypes.Tuple:
		var l []tftypes.Value
		for _, et := range tt.ElementTypes {
			l = append(l, randomValue(r, et, depth+1, unknowns))
		}
		return tftypes.NewValue(typ, l)
	case tftypes.Set:
		var l []tftypes.Value
		for i, n := 0, size()*2; i < n; i++ {
			e := randomValue(r, tt.ElementType, depth+1, unknowns)
			if e.IsNull() || !e.IsFullyKnown() {
				continue
			}
			dup := false
			for _, x := range l {
				dup = dup || x.Equal(e)
			}
			if !dup {
				l = append(l, e)
			}
		}
		return tftypes.NewValue(typ, l)
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, randomStrings[r.IntN(len(randomStrings))]+fmt.Sprint(r.IntN(3)))
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, big.NewFloat(randomNumbers[r.IntN(len(randomNumbers))]))
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, r.IntN(2) == 0)
	}
	panic(fmt.Sprintf("no random values of %s", typ))
}
