package object

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func poolOwning(owned string) *unstructured.Unstructured {
	u := poolKindForServedTests.New()
	u.SetName("pool")
	u.SetNamespace("agents")
	u.Object["spec"] = map[string]any{"replicas": int64(5), "sandboxTemplateRef": map[string]any{"name": "python"}}
	f := &metav1.FieldsV1{}
	f.SetRawString(owned)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: f}})
	return u
}

func TestReleasePatchCarriesOnlyOwnedFieldsAtTheirLiveValue(t *testing.T) {
	live := poolOwning(`{"f:spec":{"f:replicas":{},"f:sandboxTemplateRef":{"f:name":{}}}}`)
	partial, released, err := releasePatch(poolKindForServedTests, live, "agentsandbox", [][]string{{"spec", "replicas"}, {"spec", "updateStrategy", "type"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(released) != 1 || released[0] != ".spec.replicas" {
		t.Fatalf("released = %v", released)
	}
	if got, _, _ := unstructured.NestedInt64(partial.Object, "spec", "replicas"); got != 5 {
		t.Errorf("replicas = %d, want the live 5", got)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(partial.Object, "spec", "sandboxTemplateRef"); found {
		t.Error("the partial object must carry nothing but the released fields")
	}
	if partial.GetName() != "pool" || partial.GetNamespace() != "agents" || partial.GetKind() != "SandboxWarmPool" {
		t.Errorf("identity = %v", partial.Object)
	}

	// Someone else owns replicas (an autoscaler scaled it): nothing to hand over.
	live = poolOwning(`{"f:spec":{"f:sandboxTemplateRef":{"f:name":{}}}}`)
	_, released, err = releasePatch(poolKindForServedTests, live, "agentsandbox", [][]string{{"spec", "replicas"}})
	if err != nil || len(released) != 0 {
		t.Fatalf("released = %v, %v; want nothing", released, err)
	}
}

func TestReleasedFieldManager(t *testing.T) {
	if got := ReleasedFieldManager("agentsandbox"); got != "agentsandbox-released" {
		t.Errorf("got %q", got)
	}
}
