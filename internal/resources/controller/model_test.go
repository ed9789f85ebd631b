package controller

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// controllerObjectType is the `controller` attribute's type, read from the
// schema so tests build values of exactly that type.
var controllerObjectType = func() types.ObjectType {
	var resp resource.SchemaResponse
	(&controllerResource{}).Schema(context.Background(), resource.SchemaRequest{}, &resp)
	return resp.Schema.Attributes["controller"].GetType().(types.ObjectType)
}()

// controllerModelFor builds a model with the given string attributes set
// and everything else null, as a configuration that sets only those.
func controllerModelFor(attrs map[string]string) *controllerModel {
	str := func(k string) types.String {
		if v, ok := attrs[k]; ok {
			return types.StringValue(v)
		}
		return types.StringNull()
	}
	return &controllerModel{
		ID: types.StringNull(), Version: str("version"), ReleaseBaseURL: str("release_base_url"),
		ManifestURL: str("manifest_url"), Manifest: str("manifest"), ManifestFile: str("manifest_file"), ManifestSHA256: str("manifest_sha256"),
		Extensions: types.BoolNull(), ImageRegistry: str("image_registry"),
		Controller: types.ObjectNull(controllerObjectType.AttrTypes), AllowedLabelDomains: types.SetNull(types.StringType),
		KeepCRDsOnDestroy: types.BoolNull(),
		Wait:              types.BoolNull(), Namespace: types.StringNull(), AppliedManifestSHA256: types.StringNull(),
		installedModel: installedModel{Inventory: types.MapNull(inventoryElemType)},
	}
}

func TestInventoryRoundTrip(t *testing.T) {
	ctx := context.Background()
	in := []inventoryEntry{
		{APIVersion: "v1", Kind: "Namespace", Name: "n", Digest: "abc"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "n", Name: "d", Drift: driftDeleted, Digest: "def"},
		{APIVersion: "v1", Kind: "Service", Namespace: "n", Name: "s"}, // planned: digest unknown
	}
	list, diags := inventoryValue(in)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if fullyKnown(list) {
		t.Error("an entry without a digest must make the list not fully known")
	}
	digest := list.Elements()["Service/n/s"].(types.Object).Attributes()["digest"]
	if !digest.IsUnknown() {
		t.Errorf("planned digest = %v, want unknown", digest)
	}
	m := &controllerModel{installedModel: installedModel{Inventory: list}}
	out, diags := m.inventory(ctx)
	if diags.HasError() {
		t.Fatal(diags)
	}
	// Read back in apply order: Namespace, Service, Deployment.
	if len(out) != 3 || out[0] != in[0] || out[2] != in[1] || out[1].Digest != "" {
		t.Errorf("round trip: %+v", out)
	}
}

func TestInventoryKey(t *testing.T) {
	cases := map[string]inventoryEntry{
		"Namespace/agent-sandbox-system":                                          {APIVersion: "v1", Kind: "Namespace", Name: "agent-sandbox-system"},
		"Deployment.apps/agent-sandbox-system/agent-sandbox-controller":           {APIVersion: "apps/v1", Kind: "Deployment", Namespace: "agent-sandbox-system", Name: "agent-sandbox-controller"},
		"CustomResourceDefinition.apiextensions.k8s.io/sandboxes.agents.x-k8s.io": {APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "sandboxes.agents.x-k8s.io"},
	}
	for want, e := range cases {
		if got := inventoryKey(e); got != want {
			t.Errorf("inventoryKey = %q, want %q", got, want)
		}
	}
}

func TestInputsEqualAndKnown(t *testing.T) {
	a := controllerModelFor(map[string]string{"version": "v1.0.3"})
	b := controllerModelFor(map[string]string{"version": "v1.0.3"})
	b.Extensions = types.BoolValue(true) // the default, spelled out
	b.Wait = types.BoolValue(false)      // not an input
	if !inputsEqual(a, b) {
		t.Error("default extensions or wait made the inputs differ")
	}
	domains := func(d ...string) types.Set {
		var elems []attr.Value
		for _, s := range d {
			elems = append(elems, types.StringValue(s))
		}
		return types.SetValueMust(types.StringType, elems)
	}
	b.AllowedLabelDomains = domains("b.example.com", "a.example.com")
	if inputsEqual(a, b) {
		t.Error("allowed_label_domains is an input (it renders a ConfigMap)")
	}
	a.AllowedLabelDomains = domains("a.example.com", "b.example.com")
	if !inputsEqual(a, b) {
		t.Error("the same allowed_label_domains in another order made the inputs differ")
	}
	b.AllowedLabelDomains = types.SetUnknown(types.StringType)
	if b.inputsKnown() {
		t.Error("unknown allowed_label_domains must make the inputs unknown")
	}
	b.AllowedLabelDomains = types.SetValueMust(types.StringType, []attr.Value{types.StringUnknown()})
	if b.inputsKnown() {
		t.Error("an unknown domain must make the inputs unknown")
	}
	b.AllowedLabelDomains = a.AllowedLabelDomains
	b.ImageRegistry = types.StringValue("mirror.example.com")
	if inputsEqual(a, b) {
		t.Error("image_registry is an input")
	}
	if !a.inputsKnown() {
		t.Error("known inputs reported unknown")
	}
	a.ManifestSHA256 = types.StringUnknown()
	if a.inputsKnown() {
		t.Error("an unknown manifest_sha256 must make the inputs unknown")
	}
	a.ManifestSHA256 = types.StringNull()
	a.Controller = controllerValue(t, map[string]attr.Value{"args": types.ListUnknown(types.StringType)})
	if a.inputsKnown() {
		t.Error("an unknown value inside controller must make the inputs unknown")
	}
}

func TestSettingsExpand(t *testing.T) {
	ctx := context.Background()
	resType := controllerObjectType.AttrTypes["resources"].(types.ObjectType)
	tolType := controllerObjectType.AttrTypes["tolerations"].(types.ListType).ElemType.(types.ObjectType)
	m := controllerModelFor(map[string]string{"version": "v1.0.3"})
	m.Controller = controllerValue(t, map[string]attr.Value{
		"args":     types.ListValueMust(types.StringType, []attr.Value{types.StringValue("--a=1")}),
		"replicas": types.Int64Value(3),
		"resources": types.ObjectValueMust(resType.AttrTypes, map[string]attr.Value{
			"requests": types.MapValueMust(types.StringType, map[string]attr.Value{"cpu": types.StringValue("1")}),
			"limits":   types.MapNull(types.StringType),
		}),
		"node_selector": types.MapValueMust(types.StringType, map[string]attr.Value{"pool": types.StringValue("sys")}),
		"tolerations": types.ListValueMust(tolType, []attr.Value{types.ObjectValueMust(tolType.AttrTypes, map[string]attr.Value{
			"key": types.StringNull(), "operator": types.StringValue("Exists"), "value": types.StringNull(),
			"effect": types.StringValue("NoExecute"), "toleration_seconds": types.Int64Value(30),
		})}),
	})
	s, set, diags := m.settings(ctx)
	if diags.HasError() || !set {
		t.Fatal(diags)
	}
	if len(s.Args) != 1 || *s.Replicas != 3 || s.Requests["cpu"] != "1" || s.Limits != nil || !s.HasResources ||
		s.NodeSelector["pool"] != "sys" || !s.HasSelector || !s.HasTolerations {
		t.Errorf("settings = %+v", s)
	}
	want := map[string]any{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(30)}
	if len(s.Tolerations) != 1 || len(s.Tolerations[0]) != len(want) {
		t.Fatalf("tolerations = %v, want only the set fields %v", s.Tolerations, want)
	}
	for k, v := range want {
		if s.Tolerations[0][k] != v {
			t.Errorf("toleration %s = %v, want %v", k, s.Tolerations[0][k], v)
		}
	}
}

// TestDerivedTypesFitTheModels: the inventory entry's type, derived from
// the schema, reads into and converts back from the model the code uses.
func TestDerivedTypesFitTheModels(t *testing.T) {
	if err := tfvalues.CheckModel(context.Background(), inventoryElemType, &inventoryModel{}); err != nil {
		t.Error(err)
	}
}

// controllerValue is a `controller` value with the attributes of set, every
// other attribute null.
func controllerValue(t *testing.T, set map[string]attr.Value) types.Object {
	t.Helper()
	ctx := context.Background()
	vals := map[string]attr.Value{}
	for name, typ := range controllerObjectType.AttrTypes {
		if v, ok := set[name]; ok {
			vals[name] = v
			continue
		}
		null, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), nil))
		if err != nil {
			t.Fatal(err)
		}
		vals[name] = null
	}
	return types.ObjectValueMust(controllerObjectType.AttrTypes, vals)
}
