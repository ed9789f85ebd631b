package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCommittedBundlesAreUpToDate renders every bundle in memory and compares
// it byte for byte with the committed files in the parent directory: a
// failure means objects.go, releases.go or the CRDs changed without
// `go generate ./internal/sandboxapi/...`.
func TestCommittedBundlesAreUpToDate(t *testing.T) {
	rendered, err := renderAll()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join("..", "v*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var committedNames, renderedNames []string
	for _, f := range committed {
		rel, _ := filepath.Rel("..", f)
		committedNames = append(committedNames, filepath.ToSlash(rel))
	}
	for name := range rendered {
		renderedNames = append(renderedNames, name)
	}
	slices.Sort(committedNames)
	slices.Sort(renderedNames)
	if !slices.Equal(committedNames, renderedNames) {
		t.Errorf("committed bundle files %v, generator writes %v", committedNames, renderedNames)
	}
	for name, data := range rendered {
		old, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(old, data) {
			t.Errorf("%s is stale: run go generate ./internal/sandboxapi/...", name)
		}
	}
}

// TestDeterministic renders twice and into a directory twice.
func TestDeterministic(t *testing.T) {
	a, err := renderAll()
	if err != nil {
		t.Fatal(err)
	}
	b, err := renderAll()
	if err != nil {
		t.Fatal(err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two renders", name)
		}
	}
	dir := t.TempDir()
	// A stale asset left in a version directory must disappear.
	if err := os.MkdirAll(filepath.Join(dir, "v0.5.1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v0.5.1", "sandbox.yaml"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := write(dir); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range a {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: written file differs (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "v0.5.1", "sandbox.yaml")); !os.IsNotExist(err) {
		t.Error("a stale asset survived regeneration")
	}
}
