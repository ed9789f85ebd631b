package release

import (
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
