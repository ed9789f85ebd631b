package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// renderOnce is one render of every bundle, shared by the tests (a render
// takes seconds).
var renderOnce = sync.OnceValues(renderAll)

// TestCommittedBundlesAreUpToDate renders every bundle in memory from the
// pinned upstream modules and compares it byte for byte with the committed
// files in the parent directory: a failure means the generator changed
// without `go generate ./internal/sandboxapi/bundles`.
func TestCommittedBundlesAreUpToDate(t *testing.T) {
	rendered, err := renderOnce()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join("..", "v*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var committedNames []string
	for _, f := range committed {
		rel, _ := filepath.Rel("..", f)
		committedNames = append(committedNames, filepath.ToSlash(rel))
	}
	slices.Sort(committedNames)
	if renderedNames := slices.Sorted(maps.Keys(rendered)); !slices.Equal(committedNames, renderedNames) {
		t.Errorf("committed bundle files %v, generator writes %v", committedNames, renderedNames)
	}
	for name, data := range rendered {
		old, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(old, data) {
			t.Errorf("%s is stale: run go generate ./internal/sandboxapi/bundles", name)
		}
	}
}

// TestDeterministic renders twice, and writes into a directory twice over a
// stale asset and a stale release.
func TestDeterministic(t *testing.T) {
	a, err := renderOnce()
	if err != nil {
		t.Fatal(err)
	}
	b, err := renderAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Errorf("two renders wrote %d and %d files", len(a), len(b))
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two renders", name)
		}
	}
	dir := t.TempDir()
	for _, stale := range []string{"v0.5.0/sandbox.yaml", "v9.9.9/sandbox.yaml"} {
		f := filepath.Join(dir, filepath.FromSlash(stale))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := writeRendered(dir, b); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range a {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: written file differs (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "v0.5.0", "sandbox.yaml")); !os.IsNotExist(err) {
		t.Error("a stale asset survived regeneration")
	}
	if _, err := os.Stat(filepath.Join(dir, "v9.9.9")); !os.IsNotExist(err) {
		t.Error("a stale release directory survived regeneration")
	}
	// A file already right is left alone (same inode, same modification
	// time): make generate beside a running build or test (CI runs
	// docs-check beside make test) never removes or rewrites a bundle.
	before := map[string]os.FileInfo{}
	for name := range a {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		before[name] = fi
	}
	if err := writeRendered(dir, b); err != nil {
		t.Fatal(err)
	}
	for name, fi := range before {
		after, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !os.SameFile(fi, after) || !after.ModTime().Equal(fi.ModTime()) {
			t.Errorf("%s: an up-to-date file was rewritten (%v)", name, err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "v*", "*.tmp")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// fakeModule writes a module directory with the given files.
func fakeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		f := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestFlatAssets checks the release tool's rules on a small module: the
// split on "extensions" in the base name, sorted paths, "---\n" after every
// file, kustomization.yaml and dot files left out, "\r\n" read as "\n", and
// the image placeholder replaced up to the end of its line.
func TestFlatAssets(t *testing.T) {
	dir := fakeModule(t, map[string]string{
		"k8s/rbac.generated.yaml":            "rbac\n",
		"k8s/controller.yaml":                "---\nimage: ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller # placeholder\nnext: line\n",
		"k8s/crds/agents.x-k8s.io_sb.yaml":   "sandbox crd\r\n",
		"k8s/crds/extensions.x_claim.yaml":   "claim crd",
		"k8s/extensions.yaml":                "ext\n",
		"k8s/extensions-rbac.generated.yaml": "ext rbac\n",
		"k8s/extensions.controller.yaml":     "image: ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller\n",
		"k8s/kustomization.yaml":             "resources: []\n",
		"k8s/.hidden.yaml":                   "hidden\n",
		"k8s/notes.txt":                      "not yaml\n",
	})
	r := release{version: "v9.9.9", tool: toolFlat}
	files, err := k8sFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"k8s/controller.yaml", "k8s/crds/agents.x-k8s.io_sb.yaml", "k8s/crds/extensions.x_claim.yaml",
		"k8s/extensions-rbac.generated.yaml", "k8s/extensions.controller.yaml", "k8s/extensions.yaml", "k8s/rbac.generated.yaml",
	}
	if !slices.Equal(files, want) {
		t.Errorf("k8sFiles = %v, want %v", files, want)
	}
	if _, err := r.render(dir); err == nil || !strings.Contains(err.Error(), "kustomization") {
		t.Errorf("a flat-tool release with a kustomization.yaml rendered: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "k8s", "kustomization.yaml")); err != nil {
		t.Fatal(err)
	}
	assets, err := r.render(dir)
	if err != nil {
		t.Fatal(err)
	}
	img := "registry.k8s.io/agent-sandbox/agent-sandbox-controller:v9.9.9"
	if got, want := string(assets[assetManifest]), "---\nimage: "+img+"\nnext: line\n---\nsandbox crd\n---\nrbac\n---\n"; got != want {
		t.Errorf("manifest.yaml:\n%q\nwant\n%q", got, want)
	}
	if got, want := string(assets[assetExtensions]), "claim crd---\next rbac\n---\nimage: "+img+"\n---\next\n---\n"; got != want {
		t.Errorf("extensions.yaml:\n%q\nwant\n%q", got, want)
	}
	if len(assets) != 2 {
		t.Errorf("assets %v", slices.Sorted(maps.Keys(assets)))
	}
}

// TestKustomizationDrift checks the release tool's guard: the kustomization
// must list exactly the flat assets' files but extensions.controller.yaml.
func TestKustomizationDrift(t *testing.T) {
	files := []string{"k8s/controller.yaml", "k8s/extensions.controller.yaml", "k8s/extensions.yaml"}
	for _, c := range []struct {
		resources string
		ok        bool
	}{
		{"[extensions.yaml, controller.yaml]", true},
		{"[controller.yaml]", false},
		{"[controller.yaml, extensions.yaml, extensions.controller.yaml]", false},
		{"[controller.yaml, extensions.yaml, other.yaml]", false},
	} {
		dir := fakeModule(t, map[string]string{"k8s/kustomization.yaml": "resources: " + c.resources + "\n"})
		if err := checkKustomizationFiles(dir, files); (err == nil) != c.ok {
			t.Errorf("resources %s: %v", c.resources, err)
		}
	}
}
