package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCommittedFilesAreUpstreams compares the committed deploy files with
// the pinned modules' sandbox-router/deploy/*.yaml, byte for byte, and
// checks that no file is missing or extra.
func TestCommittedFilesAreUpstreams(t *testing.T) {
	want, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join("..", "v*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range committed {
		rel, _ := filepath.Rel("..", f)
		names = append(names, filepath.ToSlash(rel))
	}
	slices.Sort(names)
	if w := slices.Sorted(maps.Keys(want)); !slices.Equal(names, w) {
		t.Errorf("committed %v, upstream has %v: run go generate ./internal/sandboxapi/router", names, w)
	}
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from upstream's: run go generate ./internal/sandboxapi/router", name)
		}
	}
}

// TestWriteReplaces writes over a stale file and a stale release.
func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "v0.0.1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v0.0.1", "old.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(dir, map[string][]byte{"v1.0.3/a.yaml": []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "v0.0.1", "old.yaml")); !os.IsNotExist(err) {
		t.Errorf("stale file kept: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "v1.0.3", "a.yaml")); string(b) != "a" {
		t.Errorf("a.yaml = %q", b)
	}
}
