package fastpath

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// fixedRead is a resource type whose Read answers the state it got with
// "value" set to what the object it takes from the read slot holds
// (obj.(string)); configureDiag and readWarning make Configure and Read
// warn, readIgnoresTheSlot makes Read GET the object itself, valueType
// is the type of "value" (a string by default).
type fixedRead struct {
	key                ObjectKey
	configureDiag      bool
	readWarning        bool
	readIgnoresTheSlot bool
	valueType          basetypes.StringTypable
}

func (f *fixedRead) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_thing"
}

func (f *fixedRead) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	vt := f.valueType
	if vt == nil {
		vt = types.StringType
	}
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id":    schema.StringAttribute{Computed: true},
		"value": schema.StringAttribute{Optional: true, CustomType: vt},
	}}
}

func (f *fixedRead) Configure(_ context.Context, _ resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if f.configureDiag {
		resp.Diagnostics.AddWarning("configured", "with a warning")
	}
}

func (f *fixedRead) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}
func (f *fixedRead) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}
func (f *fixedRead) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

func (f *fixedRead) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	value := "from a GET"
	if !f.readIgnoresTheSlot {
		obj, found, ok := ReadSlotFrom(ctx).Take(f.key)
		if ok && found {
			value, _ = obj.(string)
		}
	}
	// (When it ignores the slot, it GETs the same object itself.)
	ReadSlotFrom(ctx).Saw(Seen{Key: f.key, Found: true, UID: "u", ResourceVersion: "7"})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("value"), value)...)
	if f.readWarning {
		resp.Diagnostics.AddWarning("read", "with a warning")
	}
}

func (f *fixedRead) ReadFastPath() bool { return true }
func (f *fixedRead) FastReadContext(any) (string, bool) {
	return "agentsandbox", true
}
func (f *fixedRead) FastReadGet(context.Context, any, ObjectKey) (Seen, any, bool) {
	return Seen{}, nil, false
}

// writingApply is a framework server whose ApplyResourceChange reports the
// object it "wrote" to the write slot and answers newState.
type writingApply struct {
	FrameworkServer
	key      ObjectKey
	obj      string
	newState *tfprotov6.DynamicValue
}

func (w writingApply) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (w writingApply) ApplyResourceChange(ctx context.Context, _ *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	WriteSlotFrom(ctx).Wrote(Seen{Key: w.key, Found: true, UID: "u", ResourceVersion: "7"}, w.obj)
	return &tfprotov6.ApplyResourceChangeResponse{NewState: w.newState}, nil
}

// An apply is marked exactly when the type's Read, run in the process on
// the new state with the object the apply wrote, answers that state and
// nothing else; the marker names that object and the state's hash.
func TestMarkApplied_readInProcess(t *testing.T) {
	if binaryIdentity() == "" {
		t.Skip("this test binary has no build ID")
	}
	ctx := context.Background()
	key := ObjectKey{Group: "g", Version: "v1", Resource: "things", Namespace: "ns", Name: "a"}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String, "value": tftypes.String}}
	state := func(value string) *tfprotov6.DynamicValue {
		dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, map[string]tftypes.Value{
			"id": tftypes.NewValue(tftypes.String, "ns/a"), "value": tftypes.NewValue(tftypes.String, value)}))
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	for _, tc := range []struct {
		name   string
		res    fixedRead
		obj    string // what the written object holds
		state  string // what the apply's new state holds
		marked bool
	}{
		{name: "a fixed point", obj: "x", state: "x", marked: true},
		{name: "Read changes the state", obj: "y", state: "x"},
		{name: "Configure warns", res: fixedRead{configureDiag: true}, obj: "x", state: "x"},
		{name: "Read warns", res: fixedRead{readWarning: true}, obj: "x", state: "x"},
		{name: "Read does not take the object", res: fixedRead{readIgnoresTheSlot: true}, obj: "from a GET", state: "from a GET"},
		{name: "a type with semantic equality", res: fixedRead{valueType: semanticString{}}, obj: "x", state: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.res
			res.key = key
			fw := writingApply{key: key, obj: tc.obj, newState: state(tc.state)}
			s := New(fw, "agentsandbox", []func() resource.Resource{func() resource.Resource { r := res; return &r }},
				func() (any, bool) { return struct{}{}, true })
			if _, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{}); err != nil {
				t.Fatal(err)
			}
			resp, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
				TypeName: "agentsandbox_thing", PlannedState: state(tc.state)})
			if err != nil {
				t.Fatal(err)
			}
			m, ok := decodePrivate(resp.Private)
			if ok != tc.marked {
				t.Fatalf("marked %t (private %s), want %t", ok, resp.Private, tc.marked)
			}
			if !ok {
				return
			}
			sent, _ := terraformMsgPack(mustUnmarshal(t, state(tc.state), typ), typ)
			if m.Object != key || m.UID != "u" || m.ResourceVersion != "7" || m.StateSHA256 != stateHash(sent) ||
				m.Type != "agentsandbox_thing" || m.FieldManager != "agentsandbox" {
				t.Fatalf("marker %+v", m)
			}
		})
	}
}

func mustUnmarshal(t *testing.T, dv *tfprotov6.DynamicValue, typ tftypes.Type) tftypes.Value {
	t.Helper()
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// semanticString is a string type whose values have semantic equality.
type semanticString struct{ basetypes.StringType }

func (semanticString) ValueType(context.Context) attr.Value { return semanticStringValue{} }

func (s semanticString) Equal(o attr.Type) bool { _, ok := o.(semanticString); return ok }

func (s semanticString) ValueFromString(_ context.Context, v basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return semanticStringValue{StringValue: v}, nil
}

func (s semanticString) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := s.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	sv, _ := v.(basetypes.StringValue)
	return semanticStringValue{StringValue: sv}, nil
}

type semanticStringValue struct{ basetypes.StringValue }

func (semanticStringValue) Type(context.Context) attr.Type { return semanticString{} }

func (v semanticStringValue) Equal(o attr.Value) bool {
	ov, ok := o.(semanticStringValue)
	return ok && v.StringValue.Equal(ov.StringValue)
}

func (v semanticStringValue) StringSemanticEquals(context.Context, basetypes.StringValuable) (bool, diag.Diagnostics) {
	return true, nil
}
