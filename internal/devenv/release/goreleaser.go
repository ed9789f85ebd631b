package release

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Platforms lists the os_arch platforms a goreleaser configuration builds:
// every goos × goarch of its (single) build minus its ignore list.
func Platforms(config []byte) ([]string, error) {
	var c struct {
		Builds []struct {
			Goos   []string `json:"goos"`
			Goarch []string `json:"goarch"`
			Ignore []struct {
				Goos   string `json:"goos"`
				Goarch string `json:"goarch"`
			} `json:"ignore"`
			Targets []string `json:"targets"`
		} `json:"builds"`
	}
	if err := yaml.Unmarshal(config, &c); err != nil {
		return nil, err
	}
	if len(c.Builds) != 1 {
		return nil, fmt.Errorf("the goreleaser configuration has %d builds, want 1", len(c.Builds))
	}
	b := c.Builds[0]
	if len(b.Targets) > 0 {
		out := slices.Clone(b.Targets)
		sort.Strings(out)
		return out, nil
	}
	var out []string
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			ignored := slices.ContainsFunc(b.Ignore, func(i struct {
				Goos   string `json:"goos"`
				Goarch string `json:"goarch"`
			}) bool {
				return (i.Goos == "" || i.Goos == goos) && (i.Goarch == "" || i.Goarch == goarch)
			})
			if !ignored {
				out = append(out, goos+"_"+goarch)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// RestrictPlatforms returns the goreleaser configuration building only the
// given platforms (for a quick local snapshot: the demo needs its own
// platform only), writing to dist when it is not empty; everything else is
// unchanged.
func RestrictPlatforms(config []byte, platforms []string, dist string) ([]byte, error) {
	all, err := Platforms(config)
	if err != nil {
		return nil, err
	}
	for _, p := range platforms {
		if !slices.Contains(all, p) {
			return nil, fmt.Errorf("platform %s is not one the configuration builds (%v)", p, all)
		}
	}
	// goos × goarch of the wanted platforms, minus the combinations not
	// wanted (goreleaser's own target names carry GOAMD64/GOARM suffixes,
	// which this leaves to goreleaser's defaults).
	var oses, arches []string
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "_")
		if !slices.Contains(oses, goos) {
			oses = append(oses, goos)
		}
		if !slices.Contains(arches, goarch) {
			arches = append(arches, goarch)
		}
	}
	var ignore []map[string]string
	for _, goos := range oses {
		for _, goarch := range arches {
			if !slices.Contains(platforms, goos+"_"+goarch) {
				ignore = append(ignore, map[string]string{"goos": goos, "goarch": goarch})
			}
		}
	}
	var c map[string]any
	if err := yaml.Unmarshal(config, &c); err != nil {
		return nil, err
	}
	builds, _ := c["builds"].([]any)
	if len(builds) == 0 {
		return nil, fmt.Errorf("the goreleaser configuration has no builds")
	}
	b, ok := builds[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the goreleaser configuration's first build is not a mapping")
	}
	b["goos"] = oses
	b["goarch"] = arches
	delete(b, "ignore")
	if len(ignore) > 0 {
		b["ignore"] = ignore
	}
	if dist != "" {
		c["dist"] = dist
	}
	return yaml.Marshal(c)
}

// CheckConfig verifies that a goreleaser configuration makes what the
// registry needs and nothing else: one zip per platform holding only the
// binary terraform-provider-TYPE_vVERSION, SHA256SUMS listing the zips and
// the manifest, the manifest as a release asset, and a binary detached GPG
// signature of SHA256SUMS (only of it) by GPG_FINGERPRINT's key, at the name
// the registry reads. goreleaser reports none of these mistakes itself: a
// wrong config builds and publishes a release the registry then refuses.
// Every problem is reported, one per line.
func CheckConfig(config []byte) error {
	var c struct {
		ProjectName string `json:"project_name"`
		Builds      []struct {
			Binary string   `json:"binary"`
			Env    []string `json:"env"`
		} `json:"builds"`
		Archives []struct {
			Formats      []string `json:"formats"`
			Format       string   `json:"format"`
			NameTemplate string   `json:"name_template"`
			Files        []any    `json:"files"`
		} `json:"archives"`
		Checksum struct {
			NameTemplate string `json:"name_template"`
			Algorithm    string `json:"algorithm"`
			ExtraFiles   []struct {
				Glob         string `json:"glob"`
				NameTemplate string `json:"name_template"`
			} `json:"extra_files"`
		} `json:"checksum"`
		Release struct {
			Draft      *bool `json:"draft"`
			ExtraFiles []struct {
				Glob         string `json:"glob"`
				NameTemplate string `json:"name_template"`
			} `json:"extra_files"`
		} `json:"release"`
		Signs []struct {
			ID        string   `json:"id"`
			Cmd       string   `json:"cmd"`
			Artifacts string   `json:"artifacts"`
			Signature string   `json:"signature"`
			Args      []string `json:"args"`
		} `json:"signs"`
	}
	if err := yaml.Unmarshal(config, &c); err != nil {
		return err
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	const manifestName = "{{ .ProjectName }}_{{ .Version }}_manifest.json"

	if c.ProjectName != Prefix {
		bad("project_name %q, want %q (every file name the registry reads starts with it)", c.ProjectName, Prefix)
	}
	if len(c.Builds) != 1 {
		bad("%d builds, want 1", len(c.Builds))
	} else {
		if b := c.Builds[0].Binary; b != "{{ .ProjectName }}_v{{ .Version }}" {
			bad("builds[0].binary %q, want \"{{ .ProjectName }}_v{{ .Version }}\" (the registry's terraform-provider-TYPE_vVERSION)", b)
		}
		if !slices.Contains(c.Builds[0].Env, "CGO_ENABLED=0") {
			bad("builds[0].env lacks CGO_ENABLED=0: a cross-compiled provider must not need a C library")
		}
	}
	if len(c.Archives) != 1 {
		bad("%d archives, want 1", len(c.Archives))
	} else {
		a := c.Archives[0]
		zip := slices.Equal(a.Formats, []string{"zip"}) || (len(a.Formats) == 0 && a.Format == "zip")
		if !zip {
			bad("archives[0] formats %v, want [zip]", a.Formats)
		}
		if a.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
			bad("archives[0].name_template %q, want \"{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}\"", a.NameTemplate)
		}
		if len(a.Files) != 1 || a.Files[0] != "none*" {
			bad("archives[0].files %v, want [\"none*\"] (otherwise goreleaser adds README, LICENSE and CHANGELOG to each zip)", a.Files)
		}
	}
	if c.Checksum.NameTemplate != "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS" {
		bad("checksum.name_template %q, want \"{{ .ProjectName }}_{{ .Version }}_SHA256SUMS\"", c.Checksum.NameTemplate)
	}
	if c.Checksum.Algorithm != "sha256" {
		bad("checksum.algorithm %q, want sha256", c.Checksum.Algorithm)
	}
	if !slices.ContainsFunc(c.Checksum.ExtraFiles, func(f struct {
		Glob         string `json:"glob"`
		NameTemplate string `json:"name_template"`
	}) bool {
		return f.Glob == "terraform-registry-manifest.json" && f.NameTemplate == manifestName
	}) {
		bad("checksum.extra_files does not list terraform-registry-manifest.json as %s (the registry wants its hash in SHA256SUMS)", manifestName)
	}
	if !slices.ContainsFunc(c.Release.ExtraFiles, func(f struct {
		Glob         string `json:"glob"`
		NameTemplate string `json:"name_template"`
	}) bool {
		return f.Glob == "terraform-registry-manifest.json" && f.NameTemplate == manifestName
	}) {
		bad("release.extra_files does not publish terraform-registry-manifest.json as %s", manifestName)
	}
	if c.Release.Draft == nil || !*c.Release.Draft {
		bad("release.draft is not true: the release workflow publishes the draft only after checking it (make release-check's checks)")
	}

	if len(c.Signs) != 1 {
		bad("%d signs entries, want exactly 1 (SHA256SUMS.sig)", len(c.Signs))
	} else {
		s := c.Signs[0]
		if s.Cmd != "" && s.Cmd != "gpg" {
			bad("signs[0].cmd %q, want gpg", s.Cmd)
		}
		if s.Artifacts != "checksum" {
			bad("signs[0].artifacts %q, want checksum (the registry reads a signature of SHA256SUMS only; other signatures are files it does not expect)", s.Artifacts)
		}
		if s.Signature != "" && s.Signature != "${artifact}.sig" {
			bad("signs[0].signature %q, want the default ${artifact}.sig (the registry reads terraform-provider-TYPE_VERSION_SHA256SUMS.sig)", s.Signature)
		}
		args := s.Args
		for _, want := range [][]string{{"--detach-sign", "${artifact}"}, {"--output", "${signature}"}, {"--local-user", "{{ .Env.GPG_FINGERPRINT }}"}} {
			if i := slices.Index(args, want[0]); i < 0 || i+1 >= len(args) || args[i+1] != want[1] {
				bad("signs[0].args lack %q %q", want[0], want[1])
			}
		}
		if !slices.Contains(args, "--batch") {
			bad("signs[0].args lack --batch (gpg would prompt on the release runner)")
		}
		for _, a := range args {
			switch a {
			case "--armor", "-a", "--armour":
				bad("signs[0].args has %s: the registry requires a binary signature, not an ASCII-armored one", a)
			case "--clearsign", "--clear-sign", "--sign", "-s":
				bad("signs[0].args has %s: the registry requires a detached signature (--detach-sign)", a)
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}
