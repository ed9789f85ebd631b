package releases_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/realcontroller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

func TestLookup(t *testing.T) {
	if p, err := releases.Lookup(""); err != nil || p.Name != releases.Default.Name {
		t.Errorf(`Lookup("") = %v, %v; want the default %s`, p, err, releases.Default)
	}
	for _, p := range releases.All() {
		if got, err := releases.Lookup(p.Name); err != nil || got != p {
			t.Errorf("Lookup(%q) = %v, %v", p.Name, got, err)
		}
	}
	// Releases the module proxy does not serve, and the profile names of
	// the stand-in era, are refused with the list of real ones.
	for _, name := range []string{"v0.5.1", "v0.5.4", "v1.0", "v1.0.2", "v1.0.4"} {
		_, err := releases.Lookup(name)
		if err == nil || !strings.Contains(err.Error(), "v0.5.0, v0.5.2, v0.5.3, v0.5.5, v0.5.6, v1.0.1, v1.0.3") {
			t.Errorf("Lookup(%q) error = %v, want a refusal listing the real releases", name, err)
		}
	}
	all := releases.All()
	if releases.Default != all[len(all)-1] {
		t.Errorf("Default = %s, want the newest release %s", releases.Default, all[len(all)-1])
	}
}

// TestFactsMatchTheReleaseSource checks every fact a release's own files
// can show against those files (the module at the release's tag, from the
// module cache or the Go module proxy): the versions its CRDs serve, the CEL
// rule, the warm pool's observedGeneration, the claim's serviceFQDN, the
// k8s.io/api version of its go.mod.
func TestFactsMatchTheReleaseSource(t *testing.T) {
	for _, p := range releases.All() {
		t.Run(p.Name, func(t *testing.T) {
			crds, err := testenv.ReleaseCRDs(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*unstructured.Unstructured{}
			for _, c := range crds {
				byName[c.GetName()] = c
			}
			served := func(crd string) []string {
				vs, _, _ := unstructured.NestedSlice(byName[crd].Object, "spec", "versions")
				var out []string
				for _, v := range vs {
					m := v.(map[string]any)
					if m["served"] == true {
						out = append(out, m["name"].(string))
					}
				}
				sort.Strings(out)
				return out
			}
			schema := func(crd string, path ...string) (map[string]any, bool) {
				vs, _, _ := unstructured.NestedSlice(byName[crd].Object, "spec", "versions")
				for _, v := range vs {
					m := v.(map[string]any)
					if m["name"] != "v1beta1" {
						continue
					}
					full := []string{"schema", "openAPIV3Schema"}
					for _, f := range path {
						full = append(full, "properties", f)
					}
					got, found, _ := unstructured.NestedMap(m, full...)
					return got, found
				}
				return nil, false
			}
			for name := range byName {
				got := strings.Join(served(name), ",")
				want := "v1beta1"
				if p.ServesV1alpha1 {
					want = "v1alpha1,v1beta1"
				}
				if got != want {
					t.Errorf("%s serves %s; ServesV1alpha1=%v", name, got, p.ServesV1alpha1)
				}
			}
			spec, _ := schema("sandboxes.agents.x-k8s.io", "spec")
			rules, _, _ := unstructured.NestedSlice(spec, "x-kubernetes-validations")
			hasRule := false
			for _, r := range rules {
				if strings.Contains(r.(map[string]any)["message"].(string), "volumeClaimTemplates is immutable") {
					hasRule = true
				}
			}
			if hasRule != p.SandboxVCTImmutableRule {
				t.Errorf("Sandbox.spec has the volumeClaimTemplates CEL rule: %v; SandboxVCTImmutableRule=%v", hasRule, p.SandboxVCTImmutableRule)
			}
			if _, has := schema("sandboxwarmpools.extensions.agents.x-k8s.io", "status", "observedGeneration"); has != p.WarmPoolObservedGeneration {
				t.Errorf("SandboxWarmPool.status.observedGeneration in the schema: %v; WarmPoolObservedGeneration=%v", has, p.WarmPoolObservedGeneration)
			}
			if _, has := schema("sandboxclaims.extensions.agents.x-k8s.io", "status", "sandbox", "serviceFQDN"); has != p.ClaimServiceFQDN {
				t.Errorf("SandboxClaim.status.sandbox.serviceFQDN in the schema: %v; ClaimServiceFQDN=%v", has, p.ClaimServiceFQDN)
			}

			dir, err := realcontroller.ModuleDir(t.Context(), p.Name)
			if err != nil {
				t.Fatal(err)
			}
			gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?m)^\s*k8s\.io/api (v\S+)`).FindSubmatch(gomod)
			if m == nil || string(m[1]) != p.KubernetesAPI {
				t.Errorf("go.mod requires k8s.io/api %q; KubernetesAPI=%q", m, p.KubernetesAPI)
			}
		})
	}
}
