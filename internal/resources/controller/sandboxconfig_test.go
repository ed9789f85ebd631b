package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

func TestRenderAllowedLabelDomains(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"example.com"}, "example.com"},
		{[]string{"b.example.org", "a.example.com"}, "a.example.com,b.example.org"},
		{[]string{"example.com", "example.com"}, "example.com"},
	} {
		got := renderAllowedLabelDomains(tc.in)
		if got != tc.want {
			t.Errorf("render(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// What the controller reads back is the set that was given.
		if back := strings.Join(sandboxapi.ParseAllowedLabelDomains(got), ","); back != tc.want {
			t.Errorf("parse(render(%q)) = %q", tc.in, back)
		}
	}
}

// configAnnotation returns the controller pod template's digest annotation.
func configAnnotation(t *testing.T, objs []object) (string, bool) {
	t.Helper()
	dep := findControllerDeployment(objs)
	if dep == nil {
		t.Fatal("no controller Deployment")
	}
	v, found, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "annotations", sandboxConfigAnnotation)
	return v, found
}

func TestAddSandboxConfig(t *testing.T) {
	// The releases whose extensions controller mounts the ConfigMap: the
	// all-in-one assets and the two-file layout up to v0.5.1 (v0.5.0 here; the
	// extensions.yaml Deployment replaces manifest.yaml's).
	for _, tc := range []struct {
		version string
		assets  []string
	}{
		{"v0.5.0", []string{bundles.AssetManifest, bundles.AssetExtensions}},
		{"v0.5.6", []string{assetAll}},
		{"v1.0.3", []string{assetAll}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			var files [][]object
			for _, a := range tc.assets {
				files = append(files, bundleObjects(t, tc.version, a))
			}
			objs := mergeFiles(files)
			n := len(objs)
			objs, err := addSandboxConfig(objs, []string{"team.example.com", "sandbox.users.io"})
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != n+1 {
				t.Fatalf("%d objects, want %d (the bundle and the ConfigMap)", len(objs), n+1)
			}
			cm := objs[len(objs)-1]
			if cm.GetKind() != "ConfigMap" || cm.GetName() != sandboxapi.ConfigMapName || cm.GetNamespace() != "agent-sandbox-system" {
				t.Fatalf("added %s %s/%s, want ConfigMap agent-sandbox-system/%s", cm.GetKind(), cm.GetNamespace(), cm.GetName(), sandboxapi.ConfigMapName)
			}
			value, _, _ := unstructured.NestedString(cm.Object, "data", sandboxapi.ConfigKeyAllowedLabelDomains)
			if value != "sandbox.users.io,team.example.com" {
				t.Errorf("%s = %q", sandboxapi.ConfigKeyAllowedLabelDomains, value)
			}
			sum := sha256.Sum256([]byte(value))
			if got, _ := configAnnotation(t, objs); got != hex.EncodeToString(sum[:]) {
				t.Errorf("pod template annotation %s = %q, want the SHA-256 of %q", sandboxConfigAnnotation, got, value)
			}
			// The ConfigMap is applied in the configuration stage, before
			// the Deployment that reads it.
			sortForApply(objs)
			cmAt, depAt := -1, -1
			for i, o := range objs {
				switch {
				case o.GetKind() == "ConfigMap":
					cmAt = i
				case o.GetKind() == "Deployment":
					depAt = i
				}
			}
			if cmAt > depAt {
				t.Errorf("ConfigMap at %d is applied after the Deployment at %d", cmAt, depAt)
			}
		})
	}
}

func TestAddSandboxConfigDigestFollowsTheDomains(t *testing.T) {
	digest := func(domains ...string) string {
		objs, err := addSandboxConfig(bundleObjects(t, "v1.0.3", assetAll), domains)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := configAnnotation(t, objs)
		return v
	}
	a, b := digest("a.example.com", "b.example.com"), digest("b.example.com", "a.example.com")
	if a != b {
		t.Errorf("the same set in another order changes the digest (%s, %s): the controller would roll for nothing", a, b)
	}
	if c := digest("a.example.com"); c == a {
		t.Error("another set of domains keeps the digest: the controller would not restart to read it")
	}
	if _, found := configAnnotation(t, bundleObjects(t, "v1.0.3", assetAll)); found {
		t.Error("the release's own Deployment already has the annotation")
	}
}

func TestAddSandboxConfigRefusesWhatCannotWork(t *testing.T) {
	// The core-only asset's controller (upstream's k8s/controller.yaml)
	// mounts no ConfigMap.
	_, err := addSandboxConfig(bundleObjects(t, "v1.0.3", bundles.AssetSandbox), []string{"example.com"})
	if err == nil || !strings.Contains(err.Error(), "does not mount the ConfigMap agent-sandbox-config at /etc/sandbox-config") ||
		!strings.Contains(err.Error(), "extensions = false") {
		t.Errorf("core-only release: %v", err)
	}

	// Mounted elsewhere: the controller reads a fixed path.
	objs := bundleObjects(t, "v1.0.3", assetAll)
	c, _, dep := controllerContainer(t, objs)
	c["volumeMounts"] = []any{map[string]any{"name": "config-volume", "mountPath": "/etc/other"}}
	replaceContainer(t, dep, c)
	if _, err := addSandboxConfig(objs, []string{"example.com"}); err == nil || !strings.Contains(err.Error(), "does not mount") {
		t.Errorf("mounted at another path: %v", err)
	}

	// No controller Deployment at all.
	var noDep []object
	for _, o := range bundleObjects(t, "v1.0.3", assetAll) {
		if o.GetKind() != "Deployment" {
			noDep = append(noDep, o)
		}
	}
	if _, err := addSandboxConfig(noDep, []string{"example.com"}); err == nil || !strings.Contains(err.Error(), `no Deployment named "agent-sandbox-controller"`) {
		t.Errorf("no Deployment: %v", err)
	}

	// A manifest with its own ConfigMap: two owners of one object.
	objs = bundleObjects(t, "v1.0.3", assetAll)
	objs = append(objs, mustParse(t, "extra.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: agent-sandbox-config
  namespace: agent-sandbox-system
data:
  allowed-label-domains: example.org
`)...)
	if _, err := addSandboxConfig(objs, []string{"example.com"}); err == nil || !strings.Contains(err.Error(), "has its own ConfigMap agent-sandbox-system/agent-sandbox-config") {
		t.Errorf("manifest with the ConfigMap: %v", err)
	}
}

// replaceContainer writes c back as the first container of dep.
func replaceContainer(t *testing.T, dep *unstructured.Unstructured, c map[string]any) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	containers[0] = c
	if err := unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
}
