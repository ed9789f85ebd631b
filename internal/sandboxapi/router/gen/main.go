// Command gen copies the sandbox router's deploy manifests of every release
// that has them from upstream's modules into package router (see
// ../embed.go): for each release it locates sigs.k8s.io/agent-sandbox with
// `go mod download -json` (the module cache, or the Go module proxy),
// refuses a module whose hash is not the pinned one, and copies
// sandbox-router/deploy/*.yaml byte for byte to <out>/<version>/.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

type downloaded struct{ Path, Version, Dir, Sum, Error string }

// moduleDirs runs one `go mod download -json` in an empty directory (so it
// neither reads nor touches this project's go.mod) and returns each
// release's module directory.
func moduleDirs() (map[string]string, error) {
	tmp, err := os.MkdirTemp("", "router-gen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	args := []string{"mod", "download", "-json"}
	for _, r := range releases {
		args = append(args, modulePath+"@"+r.version)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	got := map[string]downloaded{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var d downloaded
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go %v: %w (stderr: %s)", args, err, stderr.String())
		}
		got[d.Version] = d
	}
	dirs := map[string]string{}
	for _, r := range releases {
		d, ok := got[r.version]
		switch {
		case !ok:
			return nil, fmt.Errorf("go mod download printed nothing for %s@%s (stderr: %s): %w", modulePath, r.version, stderr.String(), runErr)
		case d.Error != "":
			return nil, fmt.Errorf("%s@%s: %s", modulePath, r.version, d.Error)
		case d.Sum != r.sum:
			return nil, fmt.Errorf("%s@%s has hash %s, the generator pins %s", modulePath, r.version, d.Sum, r.sum)
		}
		dirs[r.version] = d.Dir
	}
	return dirs, nil
}
