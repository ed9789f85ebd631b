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

// writeRendered writes rendered files ("<version>/<asset>") below dir. It
// first removes every v*/*.yaml file there and the version directories left
// empty, so a dropped release or asset disappears.
func writeRendered(dir string, rendered map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(dir, "v*", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range old {
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
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, rendered[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
