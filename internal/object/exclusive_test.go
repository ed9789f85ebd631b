package object

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sandboxWithExtraContainer is what a Sandbox looks like after someone added
// a container with kubectl edit: our manager applied one container and the
// pod label "team"; kubectl-edit added container "extra" and an env entry to
// ours; the controller labelled the object and wrote status.
func sandboxWithExtraContainer() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetName("sb")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fieldsV1Raw(`{"f:spec":{"f:podTemplate":{
			"f:metadata":{"f:labels":{"f:team":{}}},
			"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fieldsV1Raw(`{"f:spec":{"f:podTemplate":{"f:spec":{"f:containers":{
			"k:{\"name\":\"extra\"}":{".":{},"f:name":{},"f:image":{}},
			"k:{\"name\":\"main\"}":{"f:env":{".":{},"k:{\"name\":\"DEBUG\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`)},
		{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fieldsV1Raw(`{"f:metadata":{"f:labels":{"f:hash":{}}}}`)},
		{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fieldsV1Raw(`{"f:status":{"f:ready":{}}}`)},
	})
	return u
}

func fieldsV1Raw(s string) *metav1.FieldsV1 {
	return metav1.NewFieldsV1(strings.Join(strings.Fields(s), ""))
}

func TestStrayFieldsFindsOnlyOthersAdditionsUnderThePaths(t *testing.T) {
	obj := sandboxWithExtraContainer()
	stray, err := strayFields(obj, "agentsandbox", []string{"spec"})
	if err != nil {
		t.Fatal(err)
	}
	if len(stray) != 1 || stray[1] == nil {
		t.Fatalf("stray = %v; want only kubectl-edit's entry (index 1)", stray)
	}
	got := describeStray(stray)
	for _, want := range []string{`containers[name="extra"].image`, `containers[name="main"].env[name="DEBUG"].value`} {
		if !strings.Contains(got, want) {
			t.Errorf("stray fields lack %s:\n%s", want, got)
		}
	}
	// Our own container is structure we own fields under, never stray.
	if strings.Contains(got, `containers[name="main"].image`) {
		t.Errorf("our own field reported as stray:\n%s", got)
	}

	// Outside the declared paths (metadata) nothing is stray, and
	// subresource entries never are.
	stray, err = strayFields(obj, "agentsandbox", []string{"metadata", "status"})
	if err != nil {
		t.Fatal(err)
	}
	if len(stray) != 1 || stray[2] == nil || !strings.Contains(describeStray(stray), "labels.hash") {
		t.Errorf("with metadata declared, the controller's label is stray: %v", stray)
	}
}

// TestStrayFieldsIgnoresEmptyFields: an empty object another manager wrote
// (the agent-sandbox claim controller's adoption Update leaves
// `additionalPodMetadata: {}`) is no drift and is left alone; the same field
// holding something is stray.
func TestStrayFieldsIgnoresEmptyFields(t *testing.T) {
	claim := func(apm map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"warmPoolRef": map[string]any{"name": "pool"}, "additionalPodMetadata": apm,
		}}}
		u.SetManagedFields([]metav1.ManagedFieldsEntry{
			{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fieldsV1Raw(`{"f:spec":{"f:warmPoolRef":{"f:name":{}}}}`)},
			{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fieldsV1Raw(`{"f:spec":{"f:additionalPodMetadata":{}}}`)},
		})
		return u
	}
	stray, err := strayFields(claim(map[string]any{}), "agentsandbox", []string{"spec"})
	if err != nil || len(stray) != 0 {
		t.Errorf("empty additionalPodMetadata: stray = %v, %v; want none", stray, err)
	}
	stray, err = strayFields(claim(map[string]any{"labels": map[string]any{"a/b": "c"}}), "agentsandbox", []string{"spec"})
	if err != nil || len(stray) != 1 {
		t.Errorf("additionalPodMetadata with labels: stray = %v, %v; want it", stray, err)
	}
}

func TestReassignMovesStrayFieldsToOurApplyEntry(t *testing.T) {
	obj := sandboxWithExtraContainer()
	stray, err := strayFields(obj, "agentsandbox", []string{"spec"})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := reassign(obj, "agentsandbox", stray)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl-edit owned nothing else, so its entry is gone; the
	// controller's two entries are untouched.
	if len(entries) != 3 {
		t.Fatalf("entries = %d, want 3: %+v", len(entries), entries)
	}
	for _, e := range entries {
		if e.Manager == "kubectl-edit" {
			t.Errorf("kubectl-edit still has an entry: %s", e.FieldsV1.GetRawString())
		}
	}
	obj.SetManagedFields(entries)
	owned, err := strayFields(obj, "agentsandbox", []string{"spec"})
	if err != nil {
		t.Fatal(err)
	}
	if len(owned) != 0 {
		t.Errorf("after reassigning, still stray: %s", describeStray(owned))
	}
	ours := entries[0].FieldsV1.GetRawString()
	if !strings.Contains(ours, `k:{\"name\":\"extra\"}`) || !strings.Contains(ours, `f:team`) {
		t.Errorf("our entry = %s; want the extra container added and our own fields kept", ours)
	}
}

func TestReassignNeedsOurApplyEntry(t *testing.T) {
	obj := sandboxWithExtraContainer()
	stray, _ := strayFields(obj, "agentsandbox", []string{"spec"})
	if _, err := reassign(obj, "someone-else", stray); err == nil {
		t.Error("reassigning to a manager without an apply entry must fail")
	}
}
