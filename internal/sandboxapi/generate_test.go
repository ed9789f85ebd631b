package sandboxapi

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesAreUpToDate reruns the controller-gen commands of the
// generate directives in doc.go with their output redirected to a temporary
// directory and
// compares the result, byte for byte, with the committed deepcopy files and
// CRDs. A failure means someone edited the types (or the YAML) without running
// `go generate ./internal/sandboxapi/...`. It needs the tools module's
// controller-gen (built through the Go module proxy on first use), so it is
// skipped with -short.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen; skipped with -short")
	}
	lines := goGenerateLines(t, "doc.go")
	if len(lines) == 0 {
		t.Fatal("doc.go has no go:generate lines")
	}
	for _, args := range lines {
		if len(args) < 4 || args[0] != "go" || args[1] != "tool" || args[3] != "controller-gen" {
			t.Fatalf("unexpected go:generate line %q", strings.Join(args, " "))
		}
		prefix, rest := args[:4], args[4:]
		switch {
		case rest[0] == "object":
			checkDeepCopy(t, prefix, rest)
		case strings.HasPrefix(rest[0], "crd"):
			checkCRDs(t, prefix, rest)
		default:
			t.Fatalf("no freshness check for %q", strings.Join(args, " "))
		}
	}
}

// checkDeepCopy regenerates each API package's zz_generated.deepcopy.go to
// stdout and compares it with the committed file.
func checkDeepCopy(t *testing.T, prefix, rest []string) {
	files, err := filepath.Glob("*/*/zz_generated.deepcopy.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no deepcopy files found: %v", err)
	}
	for _, file := range files {
		pkg := "./" + filepath.Dir(file)
		cmd := append(append([]string{}, prefix...), rest[0], "paths="+pkg, "output:object:stdout")
		got := run(t, cmd)
		compare(t, file, got)
	}
}

// checkCRDs regenerates the CRDs of one go:generate line into a temporary
// directory and compares both directories file by file.
func checkCRDs(t *testing.T, prefix, rest []string) {
	tmp := t.TempDir()
	var committedDir string
	cmd := append([]string{}, prefix...)
	for _, a := range rest {
		if dir, ok := strings.CutPrefix(a, "output:crd:dir="); ok {
			committedDir = dir
			a = "output:crd:dir=" + tmp
		}
		cmd = append(cmd, a)
	}
	if committedDir == "" {
		t.Fatalf("no output:crd:dir in %q", strings.Join(rest, " "))
	}
	run(t, cmd)
	generated, _ := filepath.Glob(filepath.Join(tmp, "*.yaml"))
	committed, _ := filepath.Glob(filepath.Join(committedDir, "*.yaml"))
	if len(generated) != len(committed) {
		t.Errorf("%s: %d committed CRD files, controller-gen writes %d", committedDir, len(committed), len(generated))
	}
	for _, g := range generated {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, filepath.Join(committedDir, filepath.Base(g)), data)
	}
}

func compare(t *testing.T, committedPath string, generated []byte) {
	t.Helper()
	committed, err := os.ReadFile(committedPath)
	if err != nil {
		t.Errorf("%s: %v (run go generate ./internal/sandboxapi/...)", committedPath, err)
		return
	}
	if !bytes.Equal(committed, generated) {
		t.Errorf("%s is stale: run go generate ./internal/sandboxapi/...", committedPath)
	}
}

func run(t *testing.T, args []string) []byte {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// goGenerateLines returns the arguments of every //go:generate line of file.
func goGenerateLines(t *testing.T, file string) [][]string {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "//go:generate "); ok {
			out = append(out, strings.Fields(rest))
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
