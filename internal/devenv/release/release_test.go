package release

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const goodManifest = `{"version": 1, "metadata": {"protocol_versions": ["6.0"]}}`

// fakeRelease is a release directory made by hand, each field one of the
// things Check verifies.
type fakeRelease struct {
	version  string
	zips     map[string][]string // zip name -> entry names
	manifest string
	extra    []string // more files in the directory
	sums     func(lines []string) []string
}

// build writes the release into a temporary directory. Every zip entry is
// this test's own executable (an ELF binary for linux/amd64 here).
func (r fakeRelease) build(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := Prefix + "_" + r.version
	var lines []string
	add := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(data)
		lines = append(lines, hex.EncodeToString(h[:])+"  "+name)
	}
	for name, entries := range r.zips {
		var buf strings.Builder
		zw := zip.NewWriter(&buf)
		for _, e := range entries {
			hdr := &zip.FileHeader{Name: e, Method: zip.Store}
			hdr.SetMode(0o755)
			w, err := zw.CreateHeader(hdr)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write(exe)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		add(name, []byte(buf.String()))
	}
	add(base+"_manifest.json", []byte(r.manifest))
	if r.sums != nil {
		lines = r.sums(lines)
	}
	if err := os.WriteFile(filepath.Join(dir, base+"_SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.extra {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func good() fakeRelease {
	return fakeRelease{
		version:  "1.2.3",
		zips:     map[string][]string{Prefix + "_1.2.3_linux_amd64.zip": {Prefix + "_v1.2.3"}},
		manifest: goodManifest,
	}
}

func TestCheckAcceptsARegistryRelease(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fake zips hold this test's binary, assumed linux/amd64")
	}
	r := good()
	r.extra = []string{Prefix + "_1.2.3_SHA256SUMS.sig", "artifacts.json", "config.yaml"}
	a, err := Check(r.build(t), []byte(goodManifest), []string{"linux_amd64"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != "1.2.3" || !a.Signed || !slices.Equal(a.Platforms(), []string{"linux_amd64"}) {
		t.Errorf("got version %q signed %v platforms %v", a.Version, a.Signed, a.Platforms())
	}
	// Unsigned (a snapshot) is fine too, and reported.
	a, err = Check(good().build(t), []byte(goodManifest), nil)
	if err != nil || a.Signed {
		t.Errorf("unsigned release: %v, signed %v", err, a.Signed)
	}
}

func TestCheckRefusesWhatTheRegistryRefuses(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fake zips hold this test's binary, assumed linux/amd64")
	}
	zipName := Prefix + "_1.2.3_linux_amd64.zip"
	cases := map[string]struct {
		edit      func(*fakeRelease)
		platforms []string
		want      string
	}{
		"binary without _v": {edit: func(r *fakeRelease) {
			r.zips[zipName] = []string{Prefix + "_1.2.3"}
		}, want: "want exactly [" + Prefix + "_v1.2.3]"},
		"extra file in the zip": {edit: func(r *fakeRelease) {
			r.zips[zipName] = []string{Prefix + "_v1.2.3", "README.md"}
		}, want: "want exactly"},
		"binary of another architecture": {edit: func(r *fakeRelease) {
			r.zips = map[string][]string{Prefix + "_1.2.3_linux_arm64.zip": {Prefix + "_v1.2.3"}}
		}, want: "is a elf amd64 binary, want elf arm64"},
		"binary of another os": {edit: func(r *fakeRelease) {
			r.zips = map[string][]string{Prefix + "_1.2.3_darwin_amd64.zip": {Prefix + "_v1.2.3"}}
		}, want: "want macho amd64"},
		"windows binary without .exe": {edit: func(r *fakeRelease) {
			r.zips = map[string][]string{Prefix + "_1.2.3_windows_amd64.zip": {Prefix + "_v1.2.3"}}
		}, want: "want exactly [" + Prefix + "_v1.2.3.exe]"},
		"version with a leading v": {edit: func(r *fakeRelease) {
			r.version = "v1.2.3"
			r.zips = map[string][]string{Prefix + "_v1.2.3_linux_amd64.zip": {Prefix + "_vv1.2.3"}}
		}, want: `version "v1.2.3" is not a semantic version`},
		"protocol 5 manifest": {edit: func(r *fakeRelease) {
			r.manifest = `{"version": 1, "metadata": {"protocol_versions": ["5.0"]}}`
		}, want: `want version 1 and ["6.0"]`},
		"manifest not the repository's": {edit: func(r *fakeRelease) {
			r.manifest = `{"version": 1, "metadata": {"protocol_versions": ["6.0"], "extra": true}}`
		}, want: "differs from terraform-registry-manifest.json"},
		"checksum wrong": {edit: func(r *fakeRelease) {
			r.sums = func(l []string) []string {
				for i := range l {
					if strings.HasSuffix(l[i], ".zip") {
						l[i] = strings.Repeat("0", 64) + l[i][64:]
					}
				}
				return l
			}
		}, want: "SHA256SUMS says 0000"},
		"manifest not in SHA256SUMS": {edit: func(r *fakeRelease) {
			r.sums = func(l []string) []string {
				return slices.DeleteFunc(l, func(s string) bool { return strings.HasSuffix(s, "manifest.json") })
			}
		}, want: "does not list " + Prefix + "_1.2.3_manifest.json"},
		"SHA256SUMS lists another file": {edit: func(r *fakeRelease) {
			r.sums = func(l []string) []string { return append(l, strings.Repeat("a", 64)+"  notes.txt") }
		}, want: "lists notes.txt"},
		"unexpected artifact": {edit: func(r *fakeRelease) {
			r.extra = []string{Prefix + "_1.2.3_linux_amd64.tar.gz"}
		}, want: "not a file the registry expects"},
		"missing platform": {platforms: []string{"linux_amd64", "darwin_arm64"}, want: "platforms [linux_amd64], want [darwin_arm64 linux_amd64]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := good()
			if tc.edit != nil {
				tc.edit(&r)
			}
			_, err := Check(r.build(t), []byte(goodManifest), tc.platforms)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := Check(t.TempDir(), []byte(goodManifest), nil); err == nil || !strings.Contains(err.Error(), "no "+Prefix+"_<version>_SHA256SUMS") {
		t.Errorf("empty directory: %v", err)
	}
}

func TestMirrorPackedLayout(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fake zips hold this test's binary, assumed linux/amd64")
	}
	a, err := Check(good().build(t), []byte(goodManifest), nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if _, err := Mirror(a, dst); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		p := filepath.Join(dst, host, "agentsandbox", "agentsandbox", Prefix+"_1.2.3_linux_amd64.zip")
		got, err := fileSHA256(p)
		if err != nil || got != a.SHA256[Prefix+"_1.2.3_linux_amd64.zip"] {
			t.Errorf("%s: sha256 %s (%v), want the release's", p, got, err)
		}
	}
	rc := CLIConfig(dst)
	for _, want := range []string{fmt.Sprintf("path    = %q", dst), `"registry.terraform.io/agentsandbox/agentsandbox"`, `"registry.opentofu.org/agentsandbox/agentsandbox"`} {
		if !strings.Contains(rc, want) {
			t.Errorf("CLI configuration lacks %s:\n%s", want, rc)
		}
	}
	if strings.Contains(rc, "direct") {
		t.Errorf("CLI configuration may download providers:\n%s", rc)
	}
}

// The repository's goreleaser configuration builds the platforms the
// registry's users run, and a restricted copy builds only the ones asked.
func TestGoreleaserPlatforms(t *testing.T) {
	cfg, err := os.ReadFile("../../../.goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	all, err := Platforms(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64"} {
		if !slices.Contains(all, p) {
			t.Errorf("platforms %v lack %s", all, p)
		}
	}
	for _, p := range []string{"darwin_386", "darwin_arm", "windows_arm"} {
		if slices.Contains(all, p) {
			t.Errorf("platforms %v include %s, which the configuration ignores", all, p)
		}
	}
	restricted, err := RestrictPlatforms(cfg, []string{"linux_amd64"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Platforms(restricted); err != nil || !slices.Equal(got, []string{"linux_amd64"}) {
		t.Errorf("restricted platforms %v, %v", got, err)
	}
	if !strings.Contains(string(restricted), "{{ .ProjectName }}_v{{ .Version }}") {
		t.Errorf("restricted configuration lost the binary name:\n%s", restricted)
	}
	restricted, err = RestrictPlatforms(cfg, []string{"linux_amd64", "darwin_arm64", "windows_amd64"}, "/tmp/d")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Platforms(restricted); err != nil || !slices.Equal(got, []string{"darwin_arm64", "linux_amd64", "windows_amd64"}) {
		t.Errorf("restricted platforms %v, %v", got, err)
	}
	if !strings.Contains(string(restricted), "dist: /tmp/d") {
		t.Errorf("restricted configuration does not write to /tmp/d:\n%s", restricted)
	}
	if _, err := RestrictPlatforms(cfg, []string{"plan9_amd64"}, ""); err == nil {
		t.Error("restricting to a platform the configuration does not build succeeded")
	}
}

// A release's published assets (the release workflow checks the draft's
// with `release check -only`) are the registry's files and nothing else.
func TestExtra(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fake zips hold this test's binary, assumed linux/amd64")
	}
	r := good()
	r.extra = []string{Prefix + "_1.2.3_SHA256SUMS.sig"}
	dir := r.build(t)
	a, err := Check(dir, []byte(goodManifest), nil)
	if err != nil {
		t.Fatal(err)
	}
	if extra, err := Extra(a); err != nil || len(extra) != 0 {
		t.Errorf("Extra of the registry's files: %v, %v", extra, err)
	}
	for _, f := range []string{"checksums.txt", "artifacts.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if extra, err := Extra(a); err != nil || !slices.Equal(extra, []string{"artifacts.json", "checksums.txt"}) {
		t.Errorf("Extra: %v, %v; want [artifacts.json checksums.txt]", extra, err)
	}
}
