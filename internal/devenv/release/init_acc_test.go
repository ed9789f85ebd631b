package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// terraform init (or tofu init, with TF_ACC_TERRAFORM_PATH) installs the
// provider from a mirror of the release artifacts, as a user of the registry
// or of an air-gapped mirror does: the lock file records the artifact's hash,
// version constraints are honoured, and nothing else is installed. Needs a
// `make release-snapshot` output in AGENTSANDBOX_RELEASE_DIST (make
// testacc-matrix sets it) holding this platform's zip.
func TestAccInitFromMirror(t *testing.T) {
	dist := os.Getenv("AGENTSANDBOX_RELEASE_DIST")
	if dist == "" {
		t.Skip("set AGENTSANDBOX_RELEASE_DIST to the dist directory of make release-snapshot (make testacc-matrix does)")
	}
	bin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("terraform"); err != nil {
			t.Skip("no terraform on PATH and no TF_ACC_TERRAFORM_PATH")
		}
	}
	manifest, err := os.ReadFile("../../../terraform-registry-manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Check(dist, manifest, nil)
	if err != nil {
		t.Fatal(err)
	}
	platform := runtime.GOOS + "_" + runtime.GOARCH
	zipName, ok := a.Zips[platform]
	if !ok {
		t.Fatalf("%s has no zip for %s (platforms %v)", dist, platform, a.Platforms())
	}
	wantH1, err := dirhash.HashZip(filepath.Join(dist, zipName), dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	mirror := t.TempDir()
	if _, err := Mirror(a, mirror); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "mirror.tfrc")
	if err := os.WriteFile(rc, []byte(CLIConfig(mirror)), 0o600); err != nil {
		t.Fatal(err)
	}
	// OpenTofu resolves "agentsandbox/agentsandbox" on its own registry.
	host := "registry.terraform.io"
	if os.Getenv("TF_ACC_PROVIDER_HOST") != "" {
		host = os.Getenv("TF_ACC_PROVIDER_HOST")
	}

	initDir := func(t *testing.T, providers string) (string, string, error) {
		t.Helper()
		dir := t.TempDir()
		cfg := "terraform {\n  required_providers {\n" + providers + "  }\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "versions.tf"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "init", "-input=false", "-no-color")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TF_CLI_CONFIG_FILE=" + rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return dir, out.String(), err
	}
	lockBlock := regexp.MustCompile(`(?s)provider "` + regexp.QuoteMeta(host) + `/agentsandbox/agentsandbox" \{(.*?)\n\}`)
	hashRE := regexp.MustCompile(`"((?:h1|zh):[^"]+)"`)

	versionRE := regexp.MustCompile(`\n\s*version\s+= "` + regexp.QuoteMeta(a.Version) + `"\n`)
	for name, constraint := range map[string]string{
		"no constraint": "",
		"exact":         `, version = "= ` + a.Version + `"`,
		"pessimistic":   `, version = "~> ` + a.Version + `"`,
		"range":         `, version = ">= ` + a.Version + `, < 1000.0.0"`,
	} {
		t.Run(name, func(t *testing.T) {
			dir, out, err := initDir(t, `    agentsandbox = { source = "agentsandbox/agentsandbox" `+constraint+` }`+"\n")
			if err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
			if err != nil {
				t.Fatalf("no lock file after init: %v\n%s", err, out)
			}
			m := lockBlock.FindSubmatch(lock)
			if m == nil {
				t.Fatalf("the lock file has no block for %s/agentsandbox/agentsandbox:\n%s", host, lock)
			}
			if !versionRE.Match(m[1]) {
				t.Errorf("lock file does not select version %s:\n%s", a.Version, m[1])
			}
			var h1 []string
			for _, h := range hashRE.FindAllStringSubmatch(string(m[1]), -1) {
				switch {
				case strings.HasPrefix(h[1], "h1:"):
					h1 = append(h1, h[1])
				case h[1] != "zh:"+a.SHA256[zipName]:
					// zh: hashes, where recorded, are the zips' SHA256SUMS entries.
					found := false
					for _, sum := range a.SHA256 {
						found = found || h[1] == "zh:"+sum
					}
					if !found {
						t.Errorf("lock file hash %s is none of SHA256SUMS'", h[1])
					}
				}
			}
			if len(h1) != 1 || h1[0] != wantH1 {
				t.Errorf("lock file h1 hashes %v, want exactly the artifact's %s:\n%s", h1, wantH1, m[1])
			}
			if _, err := os.Stat(filepath.Join(dir, ".terraform", "providers", host, "agentsandbox", "agentsandbox", a.Version, platform, Prefix+"_v"+a.Version)); err != nil {
				t.Errorf("the release's binary is not installed: %v\n%s", err, out)
			}
		})
	}

	t.Run("constraint excluding the release", func(t *testing.T) {
		dir, out, err := initDir(t, `    agentsandbox = { source = "agentsandbox/agentsandbox", version = "> `+a.Version+`" }`+"\n")
		if err == nil {
			t.Fatalf("init succeeded although no release matches > %s:\n%s", a.Version, out)
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, want := range []string{"no available releases match the given constraints > " + a.Version, "agentsandbox/agentsandbox"} {
			if !strings.Contains(flat, want) {
				t.Errorf("init output does not say %q:\n%s", want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".terraform.lock.hcl")); err == nil {
			t.Error("a failed init wrote a lock file")
		}
	})

	t.Run("nothing else is installed", func(t *testing.T) {
		_, out, err := initDir(t, `    agentsandbox = { source = "agentsandbox/agentsandbox" }`+"\n"+`    null = { source = "hashicorp/null" }`+"\n")
		if err == nil {
			t.Fatalf("init installed hashicorp/null, which the mirror does not hold:\n%s", out)
		}
		if !strings.Contains(out, "hashicorp/null") {
			t.Errorf("init's error does not name hashicorp/null:\n%s", out)
		}
	})
}
