// Command gen writes the offline release bundles of package bundles (see
// ../embed.go): for every release in releases it renders the asset files from
// the project's generated CRDs (package crds) and the RBAC, Service and
// Deployment definitions in objects.go.
//
// Output is deterministic: maps are encoded with sorted keys, objects are
// listed in a fixed order, and nothing depends on time or environment, so
// running it twice gives byte-identical files. Run it through
//
//	go generate ./internal/sandboxapi/...
//
// which first regenerates the CRDs it reads.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	out := flag.String("out", ".", "directory to write <version>/<asset> files into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "bundles/gen:", err)
		os.Exit(1)
	}
}

// write renders every bundle and writes it below dir, replacing whatever
// YAML a version directory held before (so a dropped asset disappears).
func write(dir string) error {
	rendered, err := renderAll()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	cleaned := map[string]bool{}
	for _, name := range names {
		versionDir := filepath.Join(dir, filepath.Dir(name))
		if !cleaned[versionDir] {
			old, _ := filepath.Glob(filepath.Join(versionDir, "*.yaml"))
			for _, f := range old {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(versionDir, 0o755); err != nil {
				return err
			}
			cleaned[versionDir] = true
		}
		if err := os.WriteFile(filepath.Join(dir, name), rendered[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
