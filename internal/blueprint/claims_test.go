package blueprint

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
)

func claimValue(t *testing.T, name, storage string, extra map[string]attr.Value) types.Object {
	t.Helper()
	attrs := map[string]attr.Value{
		"name":               types.StringValue(name),
		"labels":             types.MapNull(types.StringType),
		"annotations":        types.MapNull(types.StringType),
		"access_modes":       types.ListValueMust(types.StringType, []attr.Value{types.StringValue("ReadWriteOnce")}),
		"storage_class_name": types.StringNull(),
		"volume_mode":        types.StringNull(),
		"resources": types.ObjectValueMust(claimResType.AttrTypes, map[string]attr.Value{
			"requests": types.ObjectValueMust(requestsType.AttrTypes, map[string]attr.Value{"storage": types.StringValue(storage)}),
		}),
	}
	maps.Copy(attrs, extra)
	return types.ObjectValueMust(VolumeClaimTemplateType.AttrTypes, attrs)
}

func claims(objs ...types.Object) types.List {
	elems := make([]attr.Value, len(objs))
	for i, o := range objs {
		elems[i] = o
	}
	return types.ListValueMust(VolumeClaimTemplateType, elems)
}

func TestVolumeClaimTemplatesRoundTrip(t *testing.T) {
	ctx := context.Background()
	planned := claims(
		claimValue(t, "workspace", "1536Mi", map[string]attr.Value{
			"labels":             types.MapValueMust(types.StringType, map[string]attr.Value{"data": types.StringValue("scratch")}),
			"storage_class_name": types.StringValue("standard"),
			"volume_mode":        types.StringValue("Filesystem"),
		}),
		claimValue(t, "cache", "1Gi", map[string]attr.Value{
			"annotations": types.MapValueMust(types.StringType, map[string]attr.Value{}),
		}),
	)
	api, diags := ExpandVolumeClaimTemplates(ctx, planned)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if len(api) != 2 || api[0].Name != "workspace" || *api[0].Spec.StorageClassName != "standard" ||
		*api[0].Spec.VolumeMode != corev1.PersistentVolumeFilesystem || api[0].Spec.AccessModes[0] != corev1.ReadWriteOnce ||
		api[0].Labels["data"] != "scratch" {
		t.Fatalf("expanded = %+v", api)
	}
	if q := api[0].Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("1.5Gi")) != 0 {
		t.Errorf("storage = %s", q.String())
	}

	// The server writes quantities canonically ("1536Mi" for 1.5Gi) and
	// drops the empty annotation map; both read back as configured.
	live := api
	live[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1.5Gi")
	live[1].Annotations = nil
	got, diags := FlattenVolumeClaimTemplates(ctx, live, planned)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !got.Equal(planned) {
		t.Errorf("round trip:\n got %v\nwant %v", got, planned)
	}

	// Import (no prior): the server's spelling, and empty maps as null.
	got, _ = FlattenVolumeClaimTemplates(ctx, live, types.ListNull(VolumeClaimTemplateType))
	if s := got.String(); !strings.Contains(s, `"storage":"1536Mi"`) || !strings.Contains(s, `"annotations":<null>`) {
		t.Errorf("imported = %s", s)
	}

	// None live: null, never an empty list.
	if got, _ := FlattenVolumeClaimTemplates(ctx, nil, planned); !got.IsNull() {
		t.Errorf("no claims = %v, want null", got)
	}
}

func TestVolumeClaimTemplatesChanged(t *testing.T) {
	ctx := context.Background()
	a := claims(claimValue(t, "data", "1Gi", nil))
	if VolumeClaimTemplatesChanged(ctx, a, claims(claimValue(t, "data", "1024Mi", nil))) {
		t.Error("1Gi and 1024Mi are the same claim")
	}
	if !VolumeClaimTemplatesChanged(ctx, a, claims(claimValue(t, "data", "2Gi", nil))) {
		t.Error("a larger claim is a change")
	}
	if !VolumeClaimTemplatesChanged(ctx, a, types.ListNull(VolumeClaimTemplateType)) {
		t.Error("removing the claims is a change")
	}
	if !VolumeClaimTemplatesChanged(ctx, a, types.ListUnknown(VolumeClaimTemplateType)) {
		t.Error("an unknown plan counts as a change")
	}
}

func TestSameQuantityKeepsThePriorSpelling(t *testing.T) {
	for _, tc := range []struct{ state, plan, want string }{
		{"1Gi", "1024Mi", "1Gi"},
		{"1Gi", "2Gi", "2Gi"},
		{"1Gi", "1Gx", "1Gx"}, // left for the validator to report
	} {
		resp := &planmodifier.StringResponse{PlanValue: types.StringValue(tc.plan)}
		sameQuantity{}.PlanModifyString(context.Background(), planmodifier.StringRequest{
			StateValue: types.StringValue(tc.state), PlanValue: types.StringValue(tc.plan),
		}, resp)
		if resp.PlanValue.ValueString() != tc.want {
			t.Errorf("state %s, plan %s: planned %s, want %s", tc.state, tc.plan, resp.PlanValue.ValueString(), tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestServiceUnsetFalseTrue: spec.service is three-valued as upstream's
// (api/v1beta1/sandbox_types.go:260-267 at v0.5.6). Unset is not sent and
// reads back null; a resource that leaves it unset (a known prior pod
// template with a null service) keeps null whatever another writer set;
// import and data sources (null priors) read the live value.
func TestServiceUnsetFalseTrue(t *testing.T) {
	ctx := context.Background()
	managedPod := types.ObjectValueMust(map[string]attr.Type{}, map[string]attr.Value{})
	for _, tc := range []struct {
		name     string
		live     *bool
		priorPod types.Object
		prior    types.Bool
		want     types.Bool
	}{
		{"import, unset", nil, types.ObjectNull(nil), types.BoolNull(), types.BoolNull()},
		{"import, false", ptr(false), types.ObjectNull(nil), types.BoolNull(), types.BoolValue(false)},
		{"import, true", ptr(true), types.ObjectNull(nil), types.BoolNull(), types.BoolValue(true)},
		{"unset in config, another writer set true", ptr(true), managedPod, types.BoolNull(), types.BoolNull()},
		{"false in config, live true (drift)", ptr(true), managedPod, types.BoolValue(false), types.BoolValue(true)},
		{"true in config, field removed (drift)", nil, managedPod, types.BoolValue(true), types.BoolNull()},
	} {
		_, _, got, _ := Flatten(ctx, agentsv1beta1.SandboxBlueprint{Service: tc.live}, tc.priorPod, types.ListNull(VolumeClaimTemplateType), tc.prior)
		if !got.Equal(tc.want) {
			t.Errorf("%s: read as %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   types.Bool
		want *bool
	}{{types.BoolNull(), nil}, {types.BoolValue(false), ptr(false)}, {types.BoolValue(true), ptr(true)}} {
		// No pod template here (Expand reports that); only service matters.
		b, _ := Expand(ctx, types.ObjectNull(nil), types.ListNull(VolumeClaimTemplateType), tc.in)
		if (b.Service == nil) != (tc.want == nil) || b.Service != nil && *b.Service != *tc.want {
			t.Errorf("Expand(service = %v) sends %v, want %v", tc.in, b.Service, tc.want)
		}
	}
}
