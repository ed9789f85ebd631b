package object

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCreateOverAControllersObjectSaysNotToImport: when the existing object
// has a controller owner (a template's managed NetworkPolicy), "import it"
// is the wrong advice: the controller would keep rewriting it. The error
// names the owner and what to do instead.
func TestCreateOverAControllersObjectSaysNotToImport(t *testing.T) {
	yes := true
	existing := testKind.New()
	existing.SetName("python-network-policy")
	existing.SetNamespace("agents")
	existing.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: "SandboxTemplate", Name: "python", UID: "u", Controller: &yes,
	}})
	obj := testKind.New()
	obj.SetName("python-network-policy")
	obj.SetNamespace("agents")
	_, diags := testKind.Create(context.Background(), fakeMeta(existing), obj)
	if !diags.HasError() {
		t.Fatal("created over an existing object")
	}
	text := diags[0].Summary() + " " + diags[0].Detail()
	for _, want := range []string{"controlled by SandboxTemplate agents/python", "Choose another name", `network_policy_management = "Unmanaged"`} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
	if strings.Contains(text, "terraform import") {
		t.Errorf("advises an import: %s", text)
	}
}

// TestCreateOverThisProvidersObject: when the existing object was written
// by this provider's field manager, another resource (in this
// configuration or another state) may manage it, and importing it here too
// would start a tug of war (issue 37); or an earlier apply of this resource
// was killed before Terraform saved its state, and importing it is right.
// The provider cannot tell them apart, so the error says how to (state
// list, grep), to keep one resource when one has it, and to import only
// when none does, in that order. An object only other managers wrote gets
// the plain import advice.
func TestCreateOverThisProvidersObject(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		written bool
	}{
		{"applied by this provider", []metav1.ManagedFieldsEntry{{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, Time: &at}}, true},
		{"applied by this provider, then edited", []metav1.ManagedFieldsEntry{
			{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate},
			{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, Time: &at},
		}, true},
		// A create of this provider seen between its POST and its apply.
		{"created by this provider, not applied yet", []metav1.ManagedFieldsEntry{{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at}}, true},
		{"applied by kubectl", []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}, false},
		{"no managed fields", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			existing := testKind.New()
			existing.SetName("isolate")
			existing.SetNamespace("agents")
			existing.SetManagedFields(tc.entries)
			obj := testKind.New()
			obj.SetName("isolate")
			obj.SetNamespace("agents")
			_, diags := testKind.Create(context.Background(), fakeMeta(existing), obj)
			if !diags.HasError() {
				t.Fatal("created over an existing object")
			}
			text := diags[0].Summary() + "\n" + diags[0].Detail()
			if !tc.written {
				if !strings.Contains(text, "terraform import agentsandbox_widget.NAME agents/isolate") || strings.Contains(text, "state list") {
					t.Errorf("an object no resource of the provider wrote should get the plain import advice: %s", text)
				}
				return
			}
			last := -1
			for _, want := range []string{
				"already exists, written by this provider",
				`field manager "agentsandbox", last at 2026-12-01T10:00:00Z`,
				"in this configuration or in another Terraform state",
				"terraform state list | grep agentsandbox_widget",
				`grep -rn '"isolate"'`,
				"If a resource has it: keep that one",
				"Do not import it here as well",
				"Only if no state has it",
				"terraform import agentsandbox_widget.NAME agents/isolate",
			} {
				i := strings.Index(text, want)
				if i < 0 {
					t.Errorf("lacks %q:\n%s", want, text)
					continue
				}
				if i < last {
					t.Errorf("%q comes before what precedes it in the advice:\n%s", want, text)
				}
				last = i
			}
		})
	}
}

// TestCreateOfAnObjectAnotherResourceCreatedInThisApply: two resources of
// one configuration declaring the same object, created by the same
// provider process (one apply): the second is told that, and never to
// import it (issue 37: following that advice flipped a security setting on
// every apply).
func TestCreateOfAnObjectAnotherResourceCreatedInThisApply(t *testing.T) {
	meta := fakeMeta()
	first := testKind.New()
	first.SetName("isolate")
	first.SetNamespace("agents")
	// The fake client cannot server-side apply, so the first create ends
	// half way (created, then "could not finish taking ownership"): what
	// matters here is that it created the object.
	if live, diags := testKind.Create(context.Background(), meta, first); live == nil {
		t.Fatalf("first create made nothing: %v", diags)
	}
	second := first.DeepCopy()
	second.SetLabels(map[string]string{"tier": "second"})
	_, diags := testKind.Create(context.Background(), meta, second)
	if !diags.HasError() {
		t.Fatal("the second resource created the object again")
	}
	text := diags[0].Summary() + "\n" + diags[0].Detail()
	for _, want := range []string{"two resources of this configuration declare it", "in this apply", "must not be imported", `grep -rn '"isolate"'`} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "terraform import") {
		t.Errorf("advises an import:\n%s", text)
	}
	// Another provider configuration (another process's view) of the same
	// names knows nothing of it.
	other := fakeMeta(first)
	_, diags = testKind.Create(context.Background(), other, second)
	if !diags.HasError() || strings.Contains(diags[0].Summary(), "this configuration") {
		t.Errorf("a create through another provider configuration: %v", diags)
	}
}
