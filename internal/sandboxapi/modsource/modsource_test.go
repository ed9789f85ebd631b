package modsource

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	module = "sigs.k8s.io/agent-sandbox"
	v103   = "h1:ZiR6xDrXTi1ItyvyDjLvM8lIety/3QVVJ5C98sjzV2Q="
)

// TestDirs finds the pinned module's source, and refuses a hash other than
// the pinned one and a version that does not exist.
func TestDirs(t *testing.T) {
	dirs, err := Dirs(module, []Version{{Version: "v1.0.3", Sum: v103}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dirs["v1.0.3"], "sandbox-router", "deploy")); err != nil {
		t.Errorf("module directory %q lacks sandbox-router/deploy: %v", dirs["v1.0.3"], err)
	}

	_, err = Dirs(module, []Version{{Version: "v1.0.3", Sum: "h1:not-the-hash="}})
	if err == nil || !strings.Contains(err.Error(), "the generator pins h1:not-the-hash=") {
		t.Errorf("a wrong pinned hash: got %v, want an error naming both hashes", err)
	}

	_, err = Dirs(module, []Version{{Version: "v0.0.0-no-such", Sum: v103}})
	if err == nil || !strings.Contains(err.Error(), "v0.0.0-no-such") {
		t.Errorf("a missing version: got %v, want an error naming it", err)
	}
}
