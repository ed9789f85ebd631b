package gkeapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Expected shapes, quoted in every parse error.
const (
	ClusterNameShape  = "projects/PROJECT/locations/LOCATION/clusters/CLUSTER"
	NodePoolNameShape = "projects/PROJECT/locations/LOCATION/clusters/CLUSTER/nodePools/NODE_POOL"
)

var (
	// GKE cluster and node pool names: a lowercase letter, then up to 39
	// lowercase letters, digits or hyphens, not ending with a hyphen.
	idRE = regexp.MustCompile(`^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$`)
	// Project IDs (my-project), legacy domain-scoped IDs (example.com:my-project)
	// and project numbers.
	projectRE = regexp.MustCompile(`^[a-z0-9][-a-z0-9.:]{0,99}$`)
	// Regions (us-central1) and zones (us-central1-a).
	locationRE = regexp.MustCompile(`^[a-z][-a-z0-9]{0,62}$`)
)

// ClusterName identifies a GKE cluster.
type ClusterName struct {
	Project  string
	Location string
	Cluster  string
}

// String formats projects/P/locations/L/clusters/C.
func (n ClusterName) String() string {
	return fmt.Sprintf("projects/%s/locations/%s/clusters/%s", n.Project, n.Location, n.Cluster)
}

// Parent formats projects/P/locations/L, the parent for Clusters.Create/List.
func (n ClusterName) Parent() string {
	return fmt.Sprintf("projects/%s/locations/%s", n.Project, n.Location)
}

// NodePool names a node pool of this cluster.
func (n ClusterName) NodePool(pool string) NodePoolName {
	return NodePoolName{ClusterName: n, NodePool: pool}
}

// Validate checks every part, naming the one that is wrong.
func (n ClusterName) Validate() error {
	if !projectRE.MatchString(n.Project) {
		return fmt.Errorf("project %q is not a project ID or number", n.Project)
	}
	if !locationRE.MatchString(n.Location) {
		return fmt.Errorf("location %q is not a region (us-central1) or zone (us-central1-a)", n.Location)
	}
	if err := ValidateID("cluster", n.Cluster); err != nil {
		return err
	}
	return nil
}

// NodePoolName identifies a node pool; ClusterName is its parent (the
// parent of NodePools.Create/List).
type NodePoolName struct {
	ClusterName
	NodePool string
}

// String formats projects/P/locations/L/clusters/C/nodePools/N.
func (n NodePoolName) String() string {
	return n.ClusterName.String() + "/nodePools/" + n.NodePool
}

// Validate checks every part, naming the one that is wrong.
func (n NodePoolName) Validate() error {
	if err := n.ClusterName.Validate(); err != nil {
		return err
	}
	return ValidateID("node pool", n.NodePool)
}

// ValidateID checks a cluster or node pool name (what is called "name" in
// the console): the rule is the same for both. kind names it in the error.
func ValidateID(kind, id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("%s name %q is invalid: it must be 1 to 40 lowercase letters, digits or hyphens, "+
			"start with a letter and not end with a hyphen", kind, id)
	}
	return nil
}

// ParseClusterName parses projects/P/locations/L/clusters/C. It also takes
// the zones/ form and API URLs (https://container.googleapis.com/v1/...),
// as found in self links and target links.
func ParseClusterName(s string) (ClusterName, error) {
	parts, err := nameParts(s, 6, ClusterNameShape)
	if err != nil {
		return ClusterName{}, err
	}
	n := ClusterName{Project: parts[1], Location: parts[3], Cluster: parts[5]}
	if err := n.Validate(); err != nil {
		return ClusterName{}, fmt.Errorf("invalid GKE cluster name %q: %w", s, err)
	}
	return n, nil
}

// ParseNodePoolName parses projects/P/locations/L/clusters/C/nodePools/N
// (also the zones/ form and API URLs).
func ParseNodePoolName(s string) (NodePoolName, error) {
	parts, err := nameParts(s, 8, NodePoolNameShape)
	if err != nil {
		return NodePoolName{}, err
	}
	n := NodePoolName{
		ClusterName: ClusterName{Project: parts[1], Location: parts[3], Cluster: parts[5]},
		NodePool:    parts[7],
	}
	if err := n.Validate(); err != nil {
		return NodePoolName{}, fmt.Errorf("invalid GKE node pool name %q: %w", s, err)
	}
	return n, nil
}

// nameParts splits a resource name and checks its fixed segments.
func nameParts(s string, want int, shape string) ([]string, error) {
	kind := "cluster"
	if want == 8 {
		kind = "node pool"
	}
	bad := func(why string) error {
		return fmt.Errorf("invalid GKE %s name %q: %s; expected %s", kind, s, why, shape)
	}
	name := strings.TrimSpace(s)
	if i := strings.Index(name, "://"); i >= 0 || strings.HasPrefix(name, "//") {
		// API URL: drop scheme, host and version.
		j := strings.Index(name, "/projects/")
		if j < 0 {
			return nil, bad("it is a URL without a projects/ path")
		}
		name = name[j+1:]
	}
	parts := strings.Split(name, "/")
	if len(parts) != want {
		return nil, bad(fmt.Sprintf("it has %d path segments instead of %d", len(parts), want))
	}
	fixed := map[int][]string{0: {"projects"}, 2: {"locations", "zones"}, 4: {"clusters"}, 6: {"nodePools"}}
	for i := 0; i < want; i++ {
		if parts[i] == "" {
			return nil, bad(fmt.Sprintf("segment %d is empty", i+1))
		}
		if allowed, ok := fixed[i]; ok && !slices.Contains(allowed, parts[i]) {
			return nil, bad(fmt.Sprintf("segment %d is %q instead of %q", i+1, parts[i], allowed[0]))
		}
	}
	return parts, nil
}

var (
	// The strict shapes of regions (us-central1) and zones (us-central1-a),
	// for plan-time checks; locationRE above only bounds what a name may hold.
	regionRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	zoneRE   = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]+)-[a-z]$`)
)

// RegionOf returns the region of a region (itself) or of a zone
// (us-central1-a is in us-central1), "" if location is neither.
func RegionOf(location string) string {
	if r := ZoneRegion(location); r != "" {
		return r
	}
	if regionRE.MatchString(location) {
		return location
	}
	return ""
}

// ZoneRegion returns the region of a zone, "" if zone is not a zone.
func ZoneRegion(zone string) string {
	if m := zoneRE.FindStringSubmatch(zone); m != nil {
		return m[1]
	}
	return ""
}
