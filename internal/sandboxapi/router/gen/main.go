// Command gen copies the sandbox router's deploy manifests of every release
// that has them from upstream's modules into package router (see
// ../embed.go): for each release it locates sigs.k8s.io/agent-sandbox with
// `go mod download -json` (the module cache, or the Go module proxy),
// refuses a module whose hash is not the pinned one, and copies
// sandbox-router/deploy/*.yaml byte for byte to <out>/<version>/.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/modsource"
)

const modulePath = "sigs.k8s.io/agent-sandbox"

// releases are the releases with a sandbox-router/deploy directory, with
// the module zip's hash as go.sum records it (the same pins as
// ../../bundles/gen/releases.go). v0.5.5 and older have no router.
var releases = []struct{ version, sum string }{
	{"v0.5.6", "h1:+lIxbO5MIPYqmnbv4eWZDm+bh9Y6qHvZ+qXEe4MJVkU="},
	{"v1.0.1", "h1:AZA1kFurdKIdNL04j9RhGZXb3kL2/O80eiXaTC/oXjM="},
	{"v1.0.3", "h1:ZiR6xDrXTi1ItyvyDjLvM8lIety/3QVVJ5C98sjzV2Q="},
}

func main() {
	out := flag.String("out", ".", "directory to write <version>/<file> into")
	flag.Parse()
	files, err := collect()
	if err == nil {
		err = write(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "router/gen:", err)
		os.Exit(1)
	}
}

// collect reads every release's deploy files: "<version>/<file>" -> bytes.
func collect() (map[string][]byte, error) {
	dirs, err := moduleDirs()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, r := range releases {
		matches, err := filepath.Glob(filepath.Join(dirs[r.version], "sandbox-router", "deploy", "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s@%s has no sandbox-router/deploy/*.yaml", modulePath, r.version)
		}
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				return nil, err
			}
			out[r.version+"/"+filepath.Base(m)] = data
		}
	}
	return out, nil
}

// write replaces every <dir>/v*/*.yaml with files.
func write(dir string, files map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(dir, "v*", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// moduleDirs returns each release's module directory, each checked against
// its pinned hash (package modsource).
func moduleDirs() (map[string]string, error) {
	versions := make([]modsource.Version, 0, len(releases))
	for _, r := range releases {
		versions = append(versions, modsource.Version{Version: r.version, Sum: r.sum})
	}
	return modsource.Dirs(modulePath, versions)
}
