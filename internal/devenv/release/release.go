// Package release checks the provider's release artifacts against what the
// Terraform registry requires, and turns them into a local provider mirror
// that `terraform init` (and `tofu init`) installs from.
//
// The registry's requirements (developer.hashicorp.com/terraform/registry/
// providers/publishing, "Manually Preparing a Release"), for provider TYPE at
// version VERSION (semver, no leading v):
//
//   - one zip per platform, terraform-provider-TYPE_VERSION_OS_ARCH.zip,
//     holding exactly the binary terraform-provider-TYPE_vVERSION (.exe on
//     Windows);
//   - terraform-provider-TYPE_VERSION_SHA256SUMS listing every zip and the
//     manifest with their SHA-256, and its detached GPG signature
//     terraform-provider-TYPE_VERSION_SHA256SUMS.sig (skipped by snapshots,
//     which have no key);
//   - terraform-provider-TYPE_VERSION_manifest.json, the repository's
//     terraform-registry-manifest.json: {"version": 1, "metadata":
//     {"protocol_versions": ["6.0"]}} for this protocol 6 provider.
//
// Check verifies all of it, down to each binary's object format and
// architecture; Mirror lays the zips out as a filesystem mirror in the packed
// layout, HOSTNAME/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip.
package release

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The provider's registry address is NAMESPACE/TYPE on a registry host.
const (
	Namespace = "agentsandbox"
	Type      = "agentsandbox"
	Prefix    = "terraform-provider-" + Type
)

// Hosts are the registries whose addresses a mirror serves the provider
// under: Terraform resolves `source = "agentsandbox/agentsandbox"` on the
// first, OpenTofu on the second.
var Hosts = []string{"registry.terraform.io", "registry.opentofu.org"}

// Artifacts is a checked release directory.
type Artifacts struct {
	Dir     string
	Version string
	// Zips maps a platform (linux_amd64) to its zip's file name.
	Zips map[string]string
	// SHA256 maps every file SHA256SUMS lists to its hash.
	SHA256 map[string]string
	Signed bool
}

// Platforms returns the platforms, sorted.
func (a *Artifacts) Platforms() []string {
	out := make([]string, 0, len(a.Zips))
	for p := range a.Zips {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

var (
	semverRE  = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	sumsRE    = regexp.MustCompile(`^` + Prefix + `_(.+)_SHA256SUMS$`)
	sumLineRE = regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
)

// Check verifies the release in dir (goreleaser's dist/) against the
// registry's requirements and manifest, the repository's
// terraform-registry-manifest.json. With platforms non-empty, the zips must
// be exactly those. Every problem found is reported, one per line.
func Check(dir string, manifest []byte, platforms []string) (*Artifacts, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	a := &Artifacts{Dir: dir, Zips: map[string]string{}, SHA256: map[string]string{}}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), Prefix+"_") {
			files = append(files, e.Name())
		}
	}
	for _, f := range files {
		if m := sumsRE.FindStringSubmatch(f); m != nil {
			if a.Version != "" {
				return nil, fmt.Errorf("%s: more than one SHA256SUMS file (%s_%s_SHA256SUMS and %s)", dir, Prefix, a.Version, f)
			}
			a.Version = m[1]
		}
	}
	if a.Version == "" {
		return nil, fmt.Errorf("%s: no %s_<version>_SHA256SUMS file (is this goreleaser's dist directory?)", dir, Prefix)
	}
	if !semverRE.MatchString(a.Version) {
		bad("version %q is not a semantic version without a leading v, as the registry requires", a.Version)
	}
	base := Prefix + "_" + a.Version
	sumsName, sigName, manifestName := base+"_SHA256SUMS", base+"_SHA256SUMS.sig", base+"_manifest.json"
	zipRE := regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `_([a-z0-9]+)_([a-z0-9]+)\.zip$`)

	for _, f := range files {
		switch {
		case f == sumsName || f == manifestName:
		case f == sigName:
			a.Signed = true
		case zipRE.MatchString(f):
			m := zipRE.FindStringSubmatch(f)
			a.Zips[m[1]+"_"+m[2]] = f
			if err := checkZip(filepath.Join(dir, f), a.Version, m[1], m[2]); err != nil {
				bad("%s: %v", f, err)
			}
		default:
			bad("%s: not a file the registry expects (zips are named %s_<os>_<arch>.zip)", f, base)
		}
	}
	if len(a.Zips) == 0 {
		bad("no %s_<os>_<arch>.zip", base)
	}
	if len(platforms) > 0 {
		want := slices.Clone(platforms)
		sort.Strings(want)
		if got := a.Platforms(); !slices.Equal(got, want) {
			bad("platforms %v, want %v", got, want)
		}
	}

	// The manifest: present, the repository's, protocol 6.
	if got, err := os.ReadFile(filepath.Join(dir, manifestName)); err != nil {
		bad("no %s: %v", manifestName, err)
	} else {
		var gotV, wantV any
		if err := json.Unmarshal(got, &gotV); err != nil {
			bad("%s: %v", manifestName, err)
		} else if err := json.Unmarshal(manifest, &wantV); err != nil {
			bad("terraform-registry-manifest.json: %v", err)
		} else if !reflect.DeepEqual(gotV, wantV) {
			bad("%s differs from terraform-registry-manifest.json:\n%s", manifestName, got)
		}
		var m struct {
			Version  int `json:"version"`
			Metadata struct {
				ProtocolVersions []string `json:"protocol_versions"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(got, &m); err == nil && (m.Version != 1 || !slices.Equal(m.Metadata.ProtocolVersions, []string{"6.0"})) {
			bad("%s: version %d, protocol_versions %v; want version 1 and [\"6.0\"] (the provider serves protocol 6 only)", manifestName, m.Version, m.Metadata.ProtocolVersions)
		}
	}

	// SHA256SUMS: exactly the zips and the manifest, with their hashes.
	sums, err := os.ReadFile(filepath.Join(dir, sumsName))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		m := sumLineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			bad("%s: line %q is not \"<sha256>  <file>\"", sumsName, sc.Text())
			continue
		}
		if _, dup := a.SHA256[m[2]]; dup {
			bad("%s lists %s twice", sumsName, m[2])
		}
		a.SHA256[m[2]] = m[1]
	}
	listed := []string{manifestName}
	for _, z := range a.Zips {
		listed = append(listed, z)
	}
	for _, f := range listed {
		want, ok := a.SHA256[f]
		if !ok {
			bad("%s does not list %s", sumsName, f)
			continue
		}
		if got, err := fileSHA256(filepath.Join(dir, f)); err == nil && got != want {
			bad("%s: SHA-256 %s, but %s says %s", f, got, sumsName, want)
		}
	}
	for f := range a.SHA256 {
		if !slices.Contains(listed, f) {
			bad("%s lists %s, which is not a zip or the manifest of this release", sumsName, f)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return a, errors.New(strings.Join(problems, "\n"))
	}
	return a, nil
}

// Extra lists the files in the release directory other than the ones the
// registry reads (the zips, SHA256SUMS, its signature and the manifest).
// Check ignores files not named like the provider's (goreleaser's dist/
// holds its own metadata); a release's published assets must not hold any.
func Extra(a *Artifacts) ([]string, error) {
	entries, err := os.ReadDir(a.Dir)
	if err != nil {
		return nil, err
	}
	base := Prefix + "_" + a.Version
	want := map[string]bool{base + "_SHA256SUMS": true, base + "_SHA256SUMS.sig": true, base + "_manifest.json": true}
	for _, z := range a.Zips {
		want[z] = true
	}
	var extra []string
	for _, e := range entries {
		if !want[e.Name()] {
			extra = append(extra, e.Name())
		}
	}
	return extra, nil
}

// checkZip verifies that a platform's zip holds exactly the provider binary,
// built for that platform.
func checkZip(path, version, goos, goarch string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	want := Prefix + "_v" + version
	if goos == "windows" {
		want += ".exe"
	}
	if len(zr.File) != 1 || zr.File[0].Name != want {
		names := make([]string, 0, len(zr.File))
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		return fmt.Errorf("holds %v, want exactly [%s]", names, want)
	}
	f := zr.File[0]
	if goos != "windows" && f.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable (mode %v)", want, f.Mode())
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	format, arch, err := binaryPlatform(data)
	if err != nil {
		return fmt.Errorf("%s: %w", want, err)
	}
	wantFormat := map[string]string{"linux": "elf", "freebsd": "elf", "darwin": "macho", "windows": "pe"}[goos]
	if wantFormat == "" {
		return fmt.Errorf("unknown os %q", goos)
	}
	if format != wantFormat || arch != goarch {
		return fmt.Errorf("%s is a %s %s binary, want %s %s", want, format, arch, wantFormat, goarch)
	}
	return nil
}

// binaryPlatform reads an executable's object format and GOARCH.
func binaryPlatform(data []byte) (format, arch string, err error) {
	r := bytes.NewReader(data)
	if f, err := elf.NewFile(r); err == nil {
		a := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_ARM: "arm", elf.EM_386: "386"}[f.Machine]
		return "elf", a, nil
	}
	if f, err := macho.NewFile(r); err == nil {
		a := map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
		return "macho", a, nil
	}
	if f, err := pe.NewFile(r); err == nil {
		a := map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64", pe.IMAGE_FILE_MACHINE_I386: "386"}[f.Machine]
		return "pe", a, nil
	}
	return "", "", errors.New("not an ELF, Mach-O or PE executable")
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Mirror lays the checked artifacts' zips out in dst as a filesystem mirror
// in the packed layout, under every host of Hosts, and returns the
// directories it filled. Zips of other versions already in dst stay (a
// mirror may hold several versions).
func Mirror(a *Artifacts, dst string) ([]string, error) {
	var dirs []string
	for _, host := range Hosts {
		dir := filepath.Join(dst, host, Namespace, Type)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for _, p := range a.Platforms() {
			name := a.Zips[p]
			if err := copyFile(filepath.Join(a.Dir, name), filepath.Join(dir, name)); err != nil {
				return nil, err
			}
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// CLIConfig is a CLI configuration that installs the provider from the
// mirror at dir under both registry addresses and nothing from the network:
// there is no direct block, so any other provider fails to install instead
// of being downloaded.
func CLIConfig(dir string) string {
	var inc []string
	for _, h := range Hosts {
		inc = append(inc, fmt.Sprintf("%q", h+"/"+Namespace+"/"+Type))
	}
	return fmt.Sprintf(`# Written by release mirror (make demo, make testacc-matrix): the agentsandbox provider
# comes from the local mirror of the release artifacts (packed layout); no
# provider is downloaded from the network.
provider_installation {
  filesystem_mirror {
    path    = %q
    include = [%s]
  }
}
`, dir, strings.Join(inc, ", "))
}
