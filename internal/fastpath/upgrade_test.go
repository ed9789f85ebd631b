package fastpath_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The upgrade of a state at the schema's version transcodes the stored
// JSON into msgpack (upgrade.go) instead of decoding it into a tftypes
// value and encoding that. The answer must decode to the value tftypes
// decodes from the JSON (the framework's pass-through), and every JSON
// tftypes refuses must be refused (the framework then answers, with its
// error). Checked on random states of every resource type, written as
// Terraform writes them (go-cty's JSON), on tftypes' lenient spellings,
// and through the servers Terraform and the framework alone give.

func TestTranscodeState_sameValueAsTftypes_providerTypes(t *testing.T) {
	for _, rt := range providerResourceTypes(t) {
		t.Run(rt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(2, uint64(len(rt.name))))
			for i := 0; i < 50 && !t.Failed(); i++ {
				v := pt.RandomValue(r, rt.typ, false)
				raw, err := ctyjson.Marshal(toCty(t, v, rt.typ), toCtyType(rt.typ))
				if err != nil {
					t.Fatal(err)
				}
				checkTranscode(t, raw, rt.typ, true)
			}
		})
	}
}

func TestTranscodeState_tftypesSpellings(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"s": tftypes.String, "n": tftypes.Number, "b": tftypes.Bool,
		"l": tftypes.List{ElementType: tftypes.String},
		"m": tftypes.Map{ElementType: tftypes.Number},
		"t": tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Bool}},
		"o": tftypes.Object{AttributeTypes: map[string]tftypes.Type{"x": tftypes.Set{ElementType: tftypes.Bool}}},
	}}
	dyn := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"d": tftypes.DynamicPseudoType}}
	for _, c := range []struct {
		json string
		typ  tftypes.Type
		ok   bool // tftypes accepts it (so must the transcoder)
	}{
		{`null`, obj, true},
		{`{}`, obj, true},
		{`{"s":"x","n":1,"b":true,"l":["a",null],"m":{"b":2,"a":1.5},"t":["x",false],"o":{"x":[true,false,true]}}`, obj, true},
		{`{"s":12.50,"n":"7","b":"1"}`, obj, true},
		{`{"s":true,"n":"-0.1","b":"0"}`, obj, true},
		{`{"s":false,"b":"false","n":1e400}`, obj, true},
		{`{"b":1}`, obj, true},
		{`{"b":0}`, obj, true},
		{`{"n":123456789012345678901234567890}`, obj, true},
		{`{"n":0.1}`, obj, true},
		{`{"s":"first","s":"second"}`, obj, true},
		{`{"gone":{"deep":[1,2]},"s":"kept"}`, obj, true},
		{`{"l":null,"m":null,"o":null,"t":null}`, obj, true},
		{`{"o":{"x":null,"y":1}}`, obj, true},
		{`{"m":{}}`, obj, true},
		{`{"l":[]}`, obj, true},
		{`{"b":"TRUE"}`, obj, false},
		{`{"b":"yes"}`, obj, false},
		{`{"b":2}`, obj, false},
		{`{"n":"twelve"}`, obj, false},
		{`{"n":true}`, obj, false},
		{`{"s":["x"]}`, obj, false},
		{`{"s":{}}`, obj, false},
		{`{"l":"x"}`, obj, false},
		{`{"l":{"a":"b"}}`, obj, false},
		{`{"m":[1]}`, obj, false},
		{`{"t":["x"]}`, obj, false},
		{`{"t":["x",true,"extra"]}`, obj, false},
		{`{"o":[]}`, obj, false},
		{`[]`, obj, false},
		{`"x"`, obj, false},
		{`{"s":`, obj, false},
		{`{"d":null}`, dyn, true},
	} {
		t.Run(c.json, func(t *testing.T) {
			checkTranscode(t, []byte(c.json), c.typ, c.ok)
		})
	}
	// Dynamic values are not transcoded: the framework answers.
	if _, ok := fastpath.TranscodeState([]byte(`{"d":{"value":"x","type":"string"}}`), dyn); ok {
		t.Error("a dynamic value was transcoded")
	}
}

// checkTranscode requires fastpath.TranscodeState(raw) to decode to what
// tftypes decodes from raw, or to refuse raw when tftypes does; accepted
// says whether tftypes accepts it (the case's own claim, checked too).
func checkTranscode(t *testing.T, raw []byte, typ tftypes.Type, accepted bool) {
	t.Helper()
	want, werr := tftypes.ValueFromJSONWithOpts(raw, typ, tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true})
	if (werr == nil) != accepted {
		t.Fatalf("tftypes: %v, the case says accepted %v: %s", werr, accepted, raw)
	}
	got, ok := fastpath.TranscodeState(raw, typ)
	if werr != nil {
		if ok {
			t.Errorf("transcoded what tftypes refuses (%v): %s", werr, raw)
		}
		return
	}
	if !ok {
		if !fastpath.HasDynamic(typ) {
			t.Errorf("refused what tftypes decodes: %s", raw)
		}
		return
	}
	gv, err := (&tfprotov6.DynamicValue{MsgPack: got}).Unmarshal(typ)
	if err != nil {
		t.Fatalf("the transcoded msgpack does not decode: %v (%s)", err, raw)
	}
	if !gv.Equal(want) {
		d, _ := gv.Diff(want)
		t.Errorf("transcoded %s to %v, tftypes decodes %v: %v", raw, gv, want, d)
	}
}

// Through the servers: the upgrade Terraform gets answers the value the
// framework's own upgrade answers, and a state the framework refuses goes
// to the framework (same error).
func TestUpgradeResourceState_answersAsTheFramework(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	fw := providerserver.NewProtocol6(provider.New("test")())()
	t.Setenv(provider.FastPathVar, "on") // the fast path's test, whatever the suite runs with
	fast, err := provider.NewProtocol6WithError("test")()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	typeName := "agentsandbox_sandbox_template"
	typ := s.ResourceType(t, typeName)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20; i++ {
		v := pt.RandomValue(r, typ, false)
		raw, err := ctyjson.Marshal(toCty(t, v, typ), toCtyType(typ))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			json []byte
		}{{"random state", raw}, {"not a state", []byte(`{"name":["x"]}`)}} {
			req := &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, RawState: &tfprotov6.RawState{JSON: c.json}}
			want, err1 := fw.UpgradeResourceState(ctx, req)
			_, _, u0 := fastpath.Counts()
			got, err2 := fast.UpgradeResourceState(ctx, req)
			_, _, u1 := fastpath.Counts()
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if len(want.Diagnostics) > 0 {
				if u1 != u0 || pt.Describe(got.Diagnostics) != pt.Describe(want.Diagnostics) {
					t.Errorf("%s: the framework says %s; through the fast path (answered: %v): %s", c.name,
						pt.Describe(want.Diagnostics), u1 != u0, pt.Describe(got.Diagnostics))
				}
				continue
			}
			if u1 != u0+1 || len(got.Diagnostics) > 0 {
				t.Fatalf("%s: not answered by the fast path: %s", c.name, pt.Describe(got.Diagnostics))
			}
			wv, err1 := want.UpgradedState.Unmarshal(typ)
			gv, err2 := got.UpgradedState.Unmarshal(typ)
			if err1 != nil || err2 != nil || !gv.Equal(wv) {
				t.Fatalf("%s: %v %v: answers differ", c.name, err1, err2)
			}
		}
	}
}
