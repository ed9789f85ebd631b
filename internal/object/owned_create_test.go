package object

import (
	"context"
	"strings"
	"testing"

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
