package gkeemu

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// GKE versions look like 1.35.3-gke.1389000: Kubernetes major.minor.patch
// and GKE's own build number.
var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)-gke\.(\d+)$`)

func parseVersion(v string) ([4]int, bool) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return [4]int{}, false
	}
	var out [4]int
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out, true
}

// compareVersions orders two GKE versions (-1, 0, 1); unparseable versions
// sort first.
func compareVersions(a, b string) int {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	switch {
	case !oka && !okb:
		return strings.Compare(a, b)
	case !oka:
		return -1
	case !okb:
		return 1
	}
	for i := range va {
		if va[i] != vb[i] {
			if va[i] < vb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func sortVersionsDesc(vs []string) {
	sort.Slice(vs, func(i, j int) bool { return compareVersions(vs[i], vs[j]) > 0 })
}

// resolveVersion applies GKE's version aliases to a requested node version:
// "" and "-" mean the control plane's version, "latest" the newest offered,
// "1.X" or "1.X.Y" the newest offered in that line, and an explicit version
// must be offered. cs.versions is newest first and never newer than the
// control plane.
func resolveVersion(cs *clusterState, v, field string) (string, *apiError) {
	switch v {
	case "", "-":
		return cs.c.CurrentMasterVersion, nil
	case "latest":
		return cs.versions[0], nil
	}
	for _, offered := range cs.versions {
		if offered == v || strings.HasPrefix(offered, v+".") || strings.HasPrefix(offered, v+"-") {
			return offered, nil
		}
	}
	return "", invalidArgument(field, "Node version %q is not supported in cluster %s (control plane %s); "+
		"valid versions are %s.", v, cs.short, cs.c.CurrentMasterVersion, strings.Join(cs.versions, ", "))
}
