// Package modsource finds the source of pinned module versions for the
// generators that copy upstream files into this repository (the release
// bundles and the sandbox router's deploy manifests): one `go mod download
// -json` for every version, each checked against the hash the generator pins.
package modsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Version is one pinned version of a module: its version and the go.sum
// hash (h1:...) the generator expects.
type Version struct {
	Version, Sum string
}

// downloaded is one entry of `go mod download -json`.
type downloaded struct {
	Path, Version, Dir, Sum, Error string
}

// Dirs downloads (or finds in the module cache) module at every version with
// one `go mod download -json` and returns the module directories by version.
// It runs in an empty temporary directory, so it neither reads nor touches
// this project's go.mod and go.sum. A version whose hash is not the pinned
// one is an error.
func Dirs(module string, versions []Version) (map[string]string, error) {
	tmp, err := os.MkdirTemp("", "modsource-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	args := []string{"mod", "download", "-json"}
	for _, v := range versions {
		args = append(args, module+"@"+v.Version)
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
	for _, v := range versions {
		d, ok := got[v.Version]
		switch {
		case !ok && runErr != nil:
			return nil, fmt.Errorf("go mod download printed nothing for %s@%s (stderr: %s): %w", module, v.Version, stderr.String(), runErr)
		case !ok:
			return nil, fmt.Errorf("go mod download printed nothing for %s@%s", module, v.Version)
		case d.Error != "":
			return nil, fmt.Errorf("%s@%s: %s", module, v.Version, d.Error)
		case d.Sum != v.Sum:
			return nil, fmt.Errorf("%s@%s has hash %s, the generator pins %s", module, v.Version, d.Sum, v.Sum)
		case d.Dir == "":
			return nil, fmt.Errorf("%s@%s: no module directory", module, v.Version)
		}
		dirs[v.Version] = d.Dir
	}
	if runErr != nil {
		return nil, fmt.Errorf("go %v: %w (stderr: %s)", args, runErr, stderr.String())
	}
	return dirs, nil
}
