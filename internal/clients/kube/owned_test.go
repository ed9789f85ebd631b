package kube

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deployment returns a Deployment as the API server would after an apply
// by "mine" of replicas, the container image and one label, with the
// server's defaults and another manager's annotation next to them.
func ownedDeployment(image string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "d", "namespace": "n",
			"labels":      map[string]any{"app": "x"},
			"annotations": map[string]any{"deployment.kubernetes.io/revision": "3"},
		},
		"spec": map[string]any{
			"replicas":             int64(2),
			"revisionHistoryLimit": int64(10), // defaulted, nobody's
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "sidecar", "image": "other:1"},
				map[string]any{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent"},
			}}},
		},
	}}
	u.SetManagedFields(entries)
	return u
}

func applyEntry(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const mineFields = `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`

func TestManagedDigest(t *testing.T) {
	base := ownedDeployment("img:1", applyEntry("mine", mineFields))
	d0, err := ManagedDigest(base, "mine", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d0) != 64 {
		t.Fatalf("digest %q is not hex SHA-256", d0)
	}

	// Noise: fields nobody or somebody else owns.
	noisy := base.DeepCopy()
	_ = unstructured.SetNestedField(noisy.Object, "4", "metadata", "annotations", "deployment.kubernetes.io/revision")
	_ = unstructured.SetNestedField(noisy.Object, int64(5), "spec", "revisionHistoryLimit")
	_ = unstructured.SetNestedField(noisy.Object, map[string]any{"replicas": int64(2)}, "status")
	containers, _, _ := unstructured.NestedSlice(noisy.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "other:2"
	_ = unstructured.SetNestedSlice(noisy.Object, containers, "spec", "template", "spec", "containers")
	noisy.SetManagedFields(append(noisy.GetManagedFields(), applyEntry("other", `{"f:spec":{"f:revisionHistoryLimit":{}}}`)))
	if d, _ := ManagedDigest(noisy, "mine", nil); d != d0 {
		t.Error("changes to fields the manager does not own changed the digest")
	}

	// Drift: a value the manager owns changed (found through the list key).
	if d, _ := ManagedDigest(ownedDeployment("img:2", applyEntry("mine", mineFields)), "mine", nil); d == d0 {
		t.Error("a changed owned value kept the digest")
	}
	// Drift: another manager took a field over (kubectl edit): the owned
	// set shrinks even though the value is the same.
	taken := `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{}}}`
	if d, _ := ManagedDigest(ownedDeployment("img:1", applyEntry("mine", taken)), "mine", nil); d == d0 {
		t.Error("losing ownership of a field kept the digest")
	}
	// Drift: the object was recreated by someone else.
	if d, _ := ManagedDigest(ownedDeployment("img:1", applyEntry("kubectl", mineFields)), "mine", nil); d == d0 {
		t.Error("an object the manager owns nothing of has the same digest")
	}
	// Ignored paths are left out.
	ignoreImage := func(p string) bool { return strings.HasSuffix(p, ".image") }
	a, _ := ManagedDigest(ownedDeployment("img:1", applyEntry("mine", mineFields)), "mine", ignoreImage)
	b, _ := ManagedDigest(ownedDeployment("img:2", applyEntry("mine", mineFields)), "mine", ignoreImage)
	if a != b {
		t.Error("an ignored path changed the digest")
	}
	// Update entries (merge patches, kubectl edit) of the same manager are
	// not what it applied.
	upd := applyEntry("mine", `{"f:spec":{"f:paused":{}}}`)
	upd.Operation = metav1.ManagedFieldsOperationUpdate
	if d, _ := ManagedDigest(ownedDeployment("img:1", applyEntry("mine", mineFields), upd), "mine", nil); d != d0 {
		t.Error("an Update entry of the manager changed the digest")
	}
}

func TestSameAppliedFields(t *testing.T) {
	a := ownedDeployment("img:1", applyEntry("mine", mineFields))
	b := ownedDeployment("img:2", applyEntry("mine", mineFields))
	if same, err := SameAppliedFields(a, b, "mine", nil); err != nil || !same {
		t.Errorf("same field sets reported different: %v %v", same, err)
	}
	c := ownedDeployment("img:1", applyEntry("mine", `{"f:spec":{"f:replicas":{}}}`))
	if same, _ := SameAppliedFields(a, c, "mine", nil); same {
		t.Error("different field sets reported the same")
	}
	onlyImage := func(p string) bool { return !strings.HasPrefix(p, ".spec.replicas") }
	if same, _ := SameAppliedFields(a, c, "mine", onlyImage); !same {
		t.Error("ignored paths were compared")
	}
}

func TestLookupPath_ListsBySetValueAndIndex(t *testing.T) {
	obj := ownedDeployment("img:1")
	obj.SetFinalizers([]string{"a/b", "c/d"})
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{applyEntry("mine", `{"f:metadata":{"f:finalizers":{"v:\"c/d\"":{}}}}`)})
	d1, err := ManagedDigest(obj, "mine", nil)
	if err != nil {
		t.Fatal(err)
	}
	obj.SetFinalizers([]string{"a/b"})
	d2, _ := ManagedDigest(obj, "mine", nil)
	if d1 == d2 {
		t.Error("a removed owned set member kept the digest")
	}
}
