package bundles_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProviderDoesNotEmbedBundles guards the rule that the provider binary
// never links this package (megabytes of test-only YAML).
func TestProviderDoesNotEmbedBundles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the provider; skipped with -short")
	}
	const provider = "github.com/agentsandbox/terraform-provider-agentsandbox"
	out, err := exec.Command("go", "list", "-deps", provider).Output()
	if err != nil {
		t.Skipf("go list -deps %s failed (is the module mid-edit?): %v", provider, err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == provider+"/internal/sandboxapi/bundles" {
			t.Fatalf("the provider binary imports %s; only tests and the demo may", dep)
		}
	}
}
