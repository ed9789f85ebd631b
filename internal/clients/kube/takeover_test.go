package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, sub, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: sub,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func leaves(t *testing.T, e metav1.ManagedFieldsEntry) []string {
	t.Helper()
	s := &fieldpath.Set{}
	if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range s.Leaves().All() {
		out = append(out, p.String())
	}
	return out
}

func TestTakeOverEntries(t *testing.T) {
	const (
		helmFields = `{"f:metadata":{"f:labels":{"f:helm.sh/chart":{}}},"f:spec":{"f:selector":{"f:app.kubernetes.io/name":{}}}}`
		ourFields  = `{"f:spec":{"f:selector":{"f:app":{}}}}`
		csaFields  = `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`
	)
	isInstaller := func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == "helm" || e.Manager == "kubectl-client-side-apply"
	}
	t.Run("into an existing Apply entry, any operation", func(t *testing.T) {
		in := []metav1.ManagedFieldsEntry{
			entry("helm", metav1.ManagedFieldsOperationApply, "v1", "", helmFields),
			entry("agentsandbox", metav1.ManagedFieldsOperationApply, "v1", "", ourFields),
			entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "v1", "", csaFields),
			entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "v1", "status", `{"f:status":{}}`),
		}
		var moved []string
		out, err := takeOverEntries(in, "v1", "agentsandbox", isInstaller, &moved)
		if err != nil {
			t.Fatal(err)
		}
		if len(moved) != 2 || len(out) != 2 || out[0].Manager != "agentsandbox" || out[1].Manager != "kube-controller-manager" {
			t.Fatalf("moved %v, entries %+v", moved, out)
		}
		got := leaves(t, out[0])
		if len(got) != 4 {
			t.Fatalf("agentsandbox owns %v, want the union of its fields, helm's and kubectl's (4 leaves)", got)
		}
	})
	t.Run("a new Apply entry; other versions and subresources untouched", func(t *testing.T) {
		in := []metav1.ManagedFieldsEntry{
			entry("helm", metav1.ManagedFieldsOperationUpdate, "v1", "", helmFields),
			entry("helm", metav1.ManagedFieldsOperationUpdate, "v1beta1", "", helmFields),
			entry("helm", metav1.ManagedFieldsOperationUpdate, "v1", "status", `{"f:status":{}}`),
		}
		var moved []string
		out, err := takeOverEntries(in, "v1", "agentsandbox", isInstaller, &moved)
		if err != nil {
			t.Fatal(err)
		}
		if len(moved) != 1 || len(out) != 3 || out[0].Manager != "agentsandbox" || out[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Fatalf("moved %v, entries %+v", moved, out)
		}
		if got := leaves(t, out[0]); len(got) != 2 {
			t.Fatalf("agentsandbox owns %v, want helm's 2 leaves", got)
		}
	})
	t.Run("nothing to take", func(t *testing.T) {
		in := []metav1.ManagedFieldsEntry{entry("agentsandbox", metav1.ManagedFieldsOperationApply, "v1", "", ourFields)}
		var moved []string
		out, err := takeOverEntries(in, "v1", "agentsandbox", isInstaller, &moved)
		if err != nil || len(moved) != 0 || len(out) != 1 {
			t.Fatalf("moved %v, entries %+v, err %v", moved, out, err)
		}
	})
}
