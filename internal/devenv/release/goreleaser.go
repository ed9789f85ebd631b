package release

import (
	"fmt"
	"slices"
	"sort"

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
	var c map[string]any
	if err := yaml.Unmarshal(config, &c); err != nil {
		return nil, err
	}
	b := c["builds"].([]any)[0].(map[string]any)
	delete(b, "goos")
	delete(b, "goarch")
	delete(b, "ignore")
	b["targets"] = platforms
	if dist != "" {
		c["dist"] = dist
	}
	return yaml.Marshal(c)
}
