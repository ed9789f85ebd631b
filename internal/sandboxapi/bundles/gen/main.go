// Command gen writes the offline release bundles of package bundles (see
// ../embed.go): for every release in releases.go it locates upstream's module
// sigs.k8s.io/agent-sandbox with `go mod download -json` (the module cache,
// or the Go module proxy), and renders the module's k8s/ directory into the
// release assets the way upstream's release tool does (render.go says how,
// with the sources it follows).
//
// Output is deterministic: it depends only on the pinned module bytes and on
// the kustomize version in go.mod, so running it twice gives byte-identical
// files. Run it through
//
//	go generate ./internal/sandboxapi/bundles
package main

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	out := flag.String("out", ".", "directory to write <version>/<asset> files into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "bundles/gen:", err)
		os.Exit(1)
	}
}

// write renders every bundle and writes it below dir.
func write(dir string) error {
	rendered, err := renderAll()
	if err != nil {
		return err
	}
	return writeRendered(dir, rendered)
}

// writeRendered writes rendered files ("<version>/<asset>") below dir. A
// file whose content is already right is not touched, a changed one is
// replaced atomically (written beside it, then renamed), and every other
// v*/*.yaml file there, with the version directories left empty, is
// removed, so a dropped release or asset disappears. A build or test reading
// the bundles while make generate runs (CI runs docs-check beside make test)
// never sees a missing or half-written file.
func writeRendered(dir string, rendered map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(dir, "v*", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range old {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			return err
		}
		if _, keep := rendered[filepath.ToSlash(rel)]; keep {
			continue
		}
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	versionDirs, err := filepath.Glob(filepath.Join(dir, "v*"))
	if err != nil {
		return err
	}
	for _, d := range versionDirs {
		if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
			if err := os.Remove(d); err != nil {
				return err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if cur, err := os.ReadFile(file); err == nil && bytes.Equal(cur, rendered[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, rendered[name], 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, file); err != nil {
			return err
		}
	}
	return nil
}
