// Package realcontroller builds and runs the real agent-sandbox controller of
// an upstream release: upstream's own `cmd/agent-sandbox-controller` of the
// module sigs.k8s.io/agent-sandbox at a release tag, built from the Go module
// proxy and run out of cluster against a local control plane. It is the
// controller of the test world (package testenv), the local demo and the
// benchmarks; nothing here models upstream's behaviour.
//
// A build is cached by release under <cache>/<version>/ (the repository's
// .cache/agent-sandbox-controller), so only the first run of a release pays
// for it (about 3 minutes cold on 2 cores; the releases share most modules,
// so the next ones take less).
package realcontroller

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// Module is upstream's Go module; Command is the controller's main package in it.
const (
	Module  = "sigs.k8s.io/agent-sandbox"
	Command = Module + "/cmd/agent-sandbox-controller"
	// versionVar is the variable upstream's image build stamps the release
	// into (Dockerfile:28 at v1.0.3: -X .../internal/version.gitVersion);
	// `--version` prints it. Releases without internal/version ignore it.
	versionVar = Module + "/internal/version.gitVersion"
)

// Binary is a built controller.
type Binary struct {
	// Path is the executable.
	Path string
	// Version is the release tag it was built from.
	Version string
	// ModuleSum is the h1: checksum of the module the Go toolchain verified
	// against the checksum database when it built the binary, read back from
	// the binary's build information: the proof of which source it runs.
	ModuleSum string
	// GoVersion is the toolchain that built it.
	GoVersion string
}

// String says what the binary is, for logs and test reports.
func (b Binary) String() string {
	return fmt.Sprintf("agent-sandbox-controller %s (%s@%s %s, %s)", b.Version, Module, b.Version, b.ModuleSum, b.GoVersion)
}

// DefaultCacheDir is where Build keeps binaries below a repository checkout.
func DefaultCacheDir(repoRoot string) string {
	return filepath.Join(repoRoot, ".cache", "agent-sandbox-controller")
}

// Build returns the controller of release version, building it first if the
// cache has none. Concurrent callers (test processes of several packages,
// the release matrix) wait for one build instead of compiling side by side.
// Progress goes to log.
func Build(ctx context.Context, cacheDir, version string, log io.Writer) (Binary, error) {
	if _, err := releases.Lookup(version); err != nil {
		return Binary{}, err
	}
	if log == nil {
		log = io.Discard
	}
	dir := filepath.Join(cacheDir, version)
	bin := filepath.Join(dir, "agent-sandbox-controller")
	if b, err := Inspect(bin); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return Binary{}, err
	}
	lock, err := os.OpenFile(filepath.Join(cacheDir, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Binary{}, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return Binary{}, fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	if b, err := Inspect(bin); err == nil {
		return b, nil // built by another process while this one waited
	}

	t0 := time.Now()
	fmt.Fprintf(log, "building %s@%s from the Go module proxy (about 3 min cold on 2 cores; then cached in %s)\n", Command, version, dir)
	tmp, err := os.MkdirTemp(cacheDir, ".build-"+version+"-")
	if err != nil {
		return Binary{}, err
	}
	defer os.RemoveAll(tmp)
	// `go install pkg@version` builds the module as its own main module,
	// with its own go.mod (no replace directives in any release) and
	// checksums verified against the checksum database. It runs in an empty
	// directory so that no go.mod or go.work around it takes part.
	cmd := exec.CommandContext(ctx, "go", "install", "-trimpath",
		"-ldflags", "-s -w -X "+versionVar+"="+version,
		Command+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return Binary{}, fmt.Errorf("go install %s@%s: %w\n%s", Command, version, err, tail(out.String(), 40))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Binary{}, err
	}
	if err := os.Rename(filepath.Join(tmp, "agent-sandbox-controller"), bin); err != nil {
		return Binary{}, err
	}
	b, err := Inspect(bin)
	if err != nil {
		return Binary{}, err
	}
	fmt.Fprintf(log, "built %s in %s\n", b, time.Since(t0).Round(time.Second))
	return b, nil
}

// Inspect reads a built controller's build information: which release of
// the module it was built from, with the module's checksum. A file that is
// not such a binary is an error.
func Inspect(path string) (Binary, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return Binary{}, err
	}
	if info.Path != Command || info.Main.Path != Module {
		return Binary{}, fmt.Errorf("%s is %s of %s, not %s", path, info.Path, info.Main.Path, Command)
	}
	if info.Main.Sum == "" {
		return Binary{}, fmt.Errorf("%s was not built from a module download (no checksum in its build information)", path)
	}
	return Binary{Path: path, Version: info.Main.Version, ModuleSum: info.Main.Sum, GoVersion: info.GoVersion}, nil
}

// ModuleDir returns the directory of release version's module in the module
// cache, downloading it from the proxy if needed.
func ModuleDir(ctx context.Context, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+version)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	var res struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &res); jerr != nil && err == nil {
		err = jerr
	}
	if res.Error != "" {
		return "", errors.New(res.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", Module, version, err)
	}
	return res.Dir, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
