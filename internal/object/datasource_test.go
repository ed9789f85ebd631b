package object

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestFlattenAllKeepsEveryKeyAndNeverNull(t *testing.T) {
	live := liveObject(map[string]string{"team": "a", "added-by-controller": "x"})
	got, diags := FlattenAll(context.Background(), live)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !got.Labels.Equal(strMap(map[string]string{"team": "a", "added-by-controller": "x"})) {
		t.Errorf("labels = %v, want all of them", got.Labels)
	}
	if got.Annotations.IsNull() || len(got.Annotations.Elements()) != 0 {
		t.Errorf("annotations = %v, want an empty map", got.Annotations)
	}
	if got.ID.ValueString() != "agents/python" || got.Namespace.ValueString() != "agents" {
		t.Errorf("identity = %v %v", got.ID, got.Namespace)
	}
}

func TestLookupOfAMissingObjectIsAnErrorWithTheHint(t *testing.T) {
	m := DataSourceMetadata{Name: types.StringValue("gone"), Namespace: types.StringNull()}
	_, _, diags := testKind.Lookup(context.Background(), fakeMeta(), m, "Widgets come from the widget controller.")
	if !diags.HasError() {
		t.Fatal("want an error")
	}
	d := diags.Errors()[0]
	if !strings.Contains(d.Summary(), `"default/gone"`) || !strings.Contains(d.Detail(), "widget controller") {
		t.Errorf("%s: %s", d.Summary(), d.Detail())
	}
}

func TestLookupFindsTheObject(t *testing.T) {
	existing := testKind.New()
	existing.SetName("w")
	existing.SetNamespace("ns")
	existing.SetLabels(map[string]string{"a": "b"})
	m := DataSourceMetadata{Name: types.StringValue("w"), Namespace: types.StringValue("ns")}
	live, got, diags := testKind.Lookup(context.Background(), fakeMeta(existing), m, "")
	if diags.HasError() || live == nil {
		t.Fatal(diags)
	}
	if got.ID.ValueString() != "ns/w" || !got.Labels.Equal(strMap(map[string]string{"a": "b"})) {
		t.Errorf("got %+v", got)
	}
}
