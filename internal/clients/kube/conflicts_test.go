package kube

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFieldConflicts(t *testing.T) {
	// The causes as the API server words them (conflict.go in
	// k8s.io/apimachinery/pkg/util/managedfields/internal).
	err := apierrors.NewApplyConflict([]metav1.StatusCause{
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-edit" using v1 at 2026-12-01T00:00:00Z`, Field: ".spec.replicas"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "team-b"`, Field: ".metadata.labels.team"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-patch" using networking.k8s.io/v1`, Field: ".spec.policyTypes"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "hpa" with subresource "scale"`, Field: ".spec.size"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "ctl" with subresource "status" using v1`, Field: ".status.x"},
		{Type: metav1.CauseTypeFieldValueInvalid, Message: `not a conflict`, Field: ".spec"},
	}, "Apply failed with 5 conflicts")
	got := FieldConflicts(err)
	want := []FieldConflict{
		{Field: ".metadata.labels.team", Manager: "team-b", Applied: true},
		{Field: ".spec.policyTypes", Manager: "kubectl-patch", Applied: false},
		{Field: ".spec.replicas", Manager: "kubectl-edit", Applied: false},
		{Field: ".spec.size", Manager: "hpa", Applied: true},
		{Field: ".status.x", Manager: "ctl", Applied: false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("conflict %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if FieldConflicts(apierrors.NewConflict(schema.GroupResource{Resource: "x"}, "y", nil)) != nil {
		t.Error("a resourceVersion conflict has no field conflicts")
	}
}
