package object

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in, ns, name string
		ok           bool
	}{
		{"agents/python", "agents", "python", true},
		{"python", "default", "python", true},
		{"", "", "", false},
		{"a/b/c", "", "", false},
		{"/b", "", "", false},
		{"a/", "", "", false},
	} {
		ns, name, err := ParseID(tc.in)
		if (err == nil) != tc.ok || ns != tc.ns || name != tc.name {
			t.Errorf("ParseID(%q) = %q, %q, %v", tc.in, ns, name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "<namespace>/<name>") {
			t.Errorf("error should show the expected form: %v", err)
		}
	}
}

func strMap(kv map[string]string) types.Map {
	if kv == nil {
		return types.MapNull(types.StringType)
	}
	elems := map[string]attr.Value{}
	for k, v := range kv {
		elems[k] = types.StringValue(v)
	}
	m, _ := types.MapValue(types.StringType, elems)
	return m
}

func liveObject(labels map[string]string, ownedLabels ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetName("python")
	u.SetNamespace("agents")
	u.SetLabels(labels)
	fields := `{"f:metadata":{"f:labels":{`
	for i, k := range ownedLabels {
		if i > 0 {
			fields += ","
		}
		fields += `"f:` + k + `":{}`
	}
	fields += `}}}`
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fieldsV1(fields)},
		{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fieldsV1(`{"f:metadata":{"f:labels":{"f:added-by-controller":{}}}}`)},
	})
	return u
}

func TestFlattenKeepsOnlyManagedKeys(t *testing.T) {
	ctx := context.Background()
	live := liveObject(map[string]string{"team": "a", "added-by-controller": "x", "tier": "changed"}, "team")

	// Prior declares team and tier; the controller's label is ignored, and
	// tier's out-of-band value is reported as is (drift).
	got, diags := Flatten(ctx, live, Metadata{DataSourceMetadata: DataSourceMetadata{Labels: strMap(map[string]string{"team": "a", "tier": "gold"})}}, "agentsandbox")
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := strMap(map[string]string{"team": "a", "tier": "changed"})
	if !got.Labels.Equal(want) {
		t.Errorf("labels = %v, want %v", got.Labels, want)
	}
	if got.ID.ValueString() != "agents/python" {
		t.Errorf("id = %s", got.ID)
	}

	// A managed key removed out of band disappears from the model: drift.
	live = liveObject(map[string]string{"added-by-controller": "x"})
	got, _ = Flatten(ctx, live, Metadata{DataSourceMetadata: DataSourceMetadata{Labels: strMap(map[string]string{"team": "a"})}}, "agentsandbox")
	if !got.Labels.Equal(strMap(map[string]string{})) {
		t.Errorf("labels = %v, want empty (the managed key is gone)", got.Labels)
	}

	// Import (no prior): the keys our field manager owns are taken.
	live = liveObject(map[string]string{"team": "a", "added-by-controller": "x"}, "team")
	got, _ = Flatten(ctx, live, Metadata{DataSourceMetadata: DataSourceMetadata{Labels: types.MapNull(types.StringType)}}, "agentsandbox")
	if !got.Labels.Equal(strMap(map[string]string{"team": "a"})) {
		t.Errorf("import labels = %v", got.Labels)
	}

	// Nothing managed and nothing declared: stays null, never an empty map.
	live = liveObject(map[string]string{"added-by-controller": "x"})
	got, _ = Flatten(ctx, live, Metadata{DataSourceMetadata: DataSourceMetadata{Labels: types.MapNull(types.StringType), Annotations: types.MapNull(types.StringType)}}, "agentsandbox")
	if !got.Labels.IsNull() || !got.Annotations.IsNull() {
		t.Errorf("labels = %v, annotations = %v, want null", got.Labels, got.Annotations)
	}
}

func TestExpandMetadata(t *testing.T) {
	u := &unstructured.Unstructured{}
	diags := Metadata{DataSourceMetadata: DataSourceMetadata{
		Name: types.StringValue("python"), Namespace: types.StringValue("agents"),
		Labels: strMap(map[string]string{"team": "a"}), Annotations: types.MapNull(types.StringType),
	}}.Expand(context.Background(), u)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if u.GetName() != "python" || u.GetNamespace() != "agents" || u.GetLabels()["team"] != "a" || u.GetAnnotations() != nil {
		t.Errorf("object = %v", u.Object)
	}
}

var testKind = Kind{
	GVR:          schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	Kind:         "Widget",
	ResourceType: "agentsandbox_widget",
}

func fakeMeta(objs ...runtime.Object) *conn.Meta {
	s := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(s, map[schema.GroupVersionResource]string{testKind.GVR: "WidgetList"}, objs...)
	return conn.ForClients("agentsandbox", kube.NewClientFromDynamic(dyn, nil), nil)
}

func TestCreateRefusesToAdoptAnExistingObject(t *testing.T) {
	existing := testKind.New()
	existing.SetName("w")
	existing.SetNamespace("ns")
	meta := fakeMeta(existing)

	obj := testKind.New()
	obj.SetName("w")
	obj.SetNamespace("ns")
	_, diags := testKind.Create(context.Background(), meta, obj)
	if !diags.HasError() {
		t.Fatal("creating over an existing object must fail")
	}
	d := diags[0].Detail()
	for _, want := range []string{"terraform import agentsandbox_widget.NAME ns/w", `the "with" line under this error`} {
		if !strings.Contains(d, want) {
			t.Errorf("the error should say how to import (%q): %s", want, d)
		}
	}
}

func TestReadMissingAndDeleteMissing(t *testing.T) {
	meta := fakeMeta()
	_, found, diags := testKind.Read(context.Background(), meta, "ns", "gone")
	if diags.HasError() || found {
		t.Fatalf("found=%v diags=%v; a missing object is not an error", found, diags)
	}
	if diags := testKind.Delete(context.Background(), meta, "ns", "gone", kube.DeleteOptions{}); diags.HasError() {
		t.Fatalf("deleting a missing object is success: %v", diags)
	}
}

func fieldsV1(raw string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	f.SetRawString(raw)
	return f
}
