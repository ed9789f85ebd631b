package podtemplate

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestUnservedFields(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"containers":{"type":"array","items":{"type":"object","properties":{
			"name":{"type":"string"},
			"volumeMounts":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"mountPath":{"type":"string"}}}}}}},
		"nodeSelector":{"type":"object","additionalProperties":{"type":"string"}},
		"overhead":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"string"}}}},
		"opaque":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
		"hostNetwork":{"type":"boolean"}}}`), &schema); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"hostNetwork":true,"nodeSelector":{"any":"x"},"opaque":{"anything":{"goes":1}}}`, ""},
		{`{"evictionResponders":[{"name":"a/b"}]}`, "spec.evictionResponders"},
		{`{"containers":[{"name":"main","volumeMounts":[{"name":"v","mountPath":"/v","bindMountOptions":{}}]}]}`,
			"spec.containers[main].volumeMounts[v].bindMountOptions"},
		{`{"containers":[{"name":"a","tty":true},{"name":"b"}],"schedulingGroup":{}}`, "spec.containers[a].tty, spec.schedulingGroup"},
		{`{"overhead":{"k":{"x":"1","y":"2"}}}`, "spec.overhead.k.y"},
	} {
		var in map[string]any
		if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(unservedFields(in, schema, "spec"), ", "); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPodSpecSchema(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"versions": []any{
		map[string]any{"name": "v1alpha1", "served": false},
		map[string]any{"name": "v1beta1", "served": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{
			"properties": map[string]any{"spec": map[string]any{"properties": map[string]any{"podTemplate": map[string]any{
				"properties": map[string]any{"spec": map[string]any{"type": "object"}}}}}}}}},
	}}}}
	if s, why := podSpecSchema(crd, "v1beta1"); s["type"] != "object" || why != "" {
		t.Errorf("v1beta1: %v %q", s, why)
	}
	if s, why := podSpecSchema(crd, "v1alpha1"); s != nil || !strings.Contains(why, "not served") {
		t.Errorf("v1alpha1: %v %q", s, why)
	}
	if s, why := podSpecSchema(crd, "v2"); s != nil || !strings.Contains(why, "not in the CRD") {
		t.Errorf("v2: %v %q", s, why)
	}
}
