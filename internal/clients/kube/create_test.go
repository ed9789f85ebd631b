package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSplitUpdateEntry(t *testing.T) {
	apply := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply}
	update := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationUpdate}
	status := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	other := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}
	for _, tc := range []struct {
		name     string
		in       []metav1.ManagedFieldsEntry
		wantKeep int
		wantDrop bool
	}{
		{"after POST and apply", []metav1.ManagedFieldsEntry{update, apply, other}, 2, true},
		{"apply only (nothing to do)", []metav1.ManagedFieldsEntry{apply, other}, 2, false},
		{"no apply entry yet: keep the update entry, it is the only record", []metav1.ManagedFieldsEntry{update, other}, 2, false},
		{"a status subresource entry stays", []metav1.ManagedFieldsEntry{apply, status}, 2, false},
		{"another manager's update entry stays", []metav1.ManagedFieldsEntry{apply, update, other, status}, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, drop := splitUpdateEntry(tc.in, "agentsandbox")
			if drop != tc.wantDrop || len(keep) != tc.wantKeep {
				t.Fatalf("keep %d drop %v; want %d %v", len(keep), drop, tc.wantKeep, tc.wantDrop)
			}
			for _, e := range keep {
				if drop && e.Manager == "agentsandbox" && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
					t.Errorf("the provider's update entry was kept")
				}
			}
		})
	}
	e, err := toUnstructuredEntry(apply)
	if err != nil || e["manager"] != "agentsandbox" || e["operation"] != "Apply" {
		t.Errorf("encoded entry %v, %v", e, err)
	}
}
