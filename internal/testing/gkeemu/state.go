package gkeemu

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"google.golang.org/api/container/v1"
)

// Defaults of a seeded cluster.
const (
	DefaultClusterVersion = "1.35.3-gke.1389000"
	DefaultReleaseChannel = "REGULAR"
	// MinAgentSandboxVersion is the lowest control plane version on which
	// the emulator lets the managed Agent Sandbox add-on be enabled. GKE's
	// documentation cites 1.35.2-gke.1269000 ("Enable Agent Sandbox on GKE",
	// https://cloud.google.com/kubernetes-engine/docs/how-to/how-install-agent-sandbox)
	// and, in other copies of that page, 1.36.3-gke.1767000 ("supports the
	// v1beta1 API"); the lower one is used.
	MinAgentSandboxVersion = "1.35.2-gke.1269000"
	// MinPodSnapshotsVersion is the lowest control plane version on which
	// the emulator lets GKE Pod snapshots (addonsConfig.podSnapshotConfig)
	// be enabled: "the version of your new cluster, which must be
	// 1.34.1-gke.3084001 or later", in "Restore from a Pod snapshot"
	// (https://docs.cloud.google.com/kubernetes-engine/docs/how-to/pod-snapshots).
	// The discovery document says nothing about versions.
	MinPodSnapshotsVersion = "1.34.1-gke.3084001"
)

// DefaultNodeVersions are the node versions a seeded cluster offers besides
// its control plane version, so that tests can create an older pool and
// upgrade it in place.
var DefaultNodeVersions = []string{"1.35.2-gke.1269000", "1.34.5-gke.1100000"}

// GKE Sandbox: the label and taint GKE puts on every gVisor node pool
// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods).
const (
	SandboxKey   = "sandbox.gke.io/runtime"
	SandboxValue = "gvisor"
)

// DefaultOauthScopes are the scopes GKE gives nodes when none are asked for.
var DefaultOauthScopes = []string{
	"https://www.googleapis.com/auth/devstorage.read_only",
	"https://www.googleapis.com/auth/logging.write",
	"https://www.googleapis.com/auth/monitoring",
	"https://www.googleapis.com/auth/service.management.readonly",
	"https://www.googleapis.com/auth/servicecontrol",
	"https://www.googleapis.com/auth/trace.append",
}

type clusterState struct {
	project, location, short string
	c                        *container.Cluster // NodePools is always nil here
	pools                    []*poolState
	versions                 []string // offered node versions, newest first
}

func (cs *clusterState) name() string {
	return "projects/" + cs.project + "/locations/" + cs.location + "/clusters/" + cs.short
}

func (cs *clusterState) autopilot() bool { return cs.c.Autopilot != nil && cs.c.Autopilot.Enabled }

func (cs *clusterState) pool(name string) *poolState {
	for _, p := range cs.pools {
		if p.np.Name == name {
			return p
		}
	}
	return nil
}

type poolState struct {
	np   *container.NodePool
	size int64 // nodes per zone; container/v1 does not report it
	gen  int
}

// touch gives the pool a new etag, as GKE does on every change.
func (p *poolState) touch() {
	p.gen++
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", p.np.SelfLink, p.gen)))
	p.np.Etag = hex.EncodeToString(sum[:8])
}

// ClusterSpec seeds a cluster. Only Project, Location and Name are
// required.
type ClusterSpec struct {
	Project  string
	Location string // a region (regional cluster) or a zone (zonal cluster)
	Name     string
	// Version is the control plane version (DefaultClusterVersion).
	Version string
	// NodeVersions are further node versions offered (DefaultNodeVersions
	// when nil); only those not newer than Version are kept.
	NodeVersions []string
	// Autopilot clusters refuse node pool mutations.
	Autopilot bool
	// ReleaseChannel is REGULAR by default; "UNSPECIFIED" enrols in none
	// (then auto-upgrade may be turned off).
	ReleaseChannel string
	// NoWorkloadIdentity leaves Workload Identity off, so GKE_METADATA is refused.
	NoWorkloadIdentity bool
	// Locations are the cluster's zones; by default zones a, b and c of a
	// regional cluster's region, or the zone of a zonal cluster.
	Locations []string
	// Endpoint is the Kubernetes API address as GKE reports it (an IP, or
	// host:port; a URL with a scheme is kept as is). It defaults to
	// 127.0.0.1, which reaches nothing.
	Endpoint string
	// CACertificatePEM is the cluster CA; a fresh self-signed one by default.
	CACertificatePEM []byte
	// NoDefaultPool leaves the cluster without its "default-pool".
	NoDefaultPool bool
	// AgentSandbox starts the cluster with the Agent Sandbox add-on on.
	AgentSandbox bool
	// PodSnapshots starts the cluster with GKE Pod snapshots on.
	PodSnapshots bool
}

var (
	idRE       = regexp.MustCompile(`^[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?$`)
	zoneRE     = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]+)-[a-z]$`)
	regionRE   = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	projectRE  = regexp.MustCompile(`^[a-z][-a-z0-9]{4,28}[a-z0-9]$`)
	errNoSuch  = errors.New("gkeemu: no such object")
	createTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// regionOf returns the region of a region or zone, "" if it is neither.
func regionOf(location string) string {
	if m := zoneRE.FindStringSubmatch(location); m != nil {
		return m[1]
	}
	if regionRE.MatchString(location) {
		return location
	}
	return ""
}

// AddCluster seeds a RUNNING cluster and returns its full resource name.
func (s *Server) AddCluster(spec ClusterSpec) (string, error) {
	if !projectRE.MatchString(spec.Project) {
		return "", fmt.Errorf("gkeemu: project %q is not a project ID", spec.Project)
	}
	region := regionOf(spec.Location)
	if region == "" {
		return "", fmt.Errorf("gkeemu: location %q is neither a region nor a zone", spec.Location)
	}
	if !idRE.MatchString(spec.Name) {
		return "", fmt.Errorf("gkeemu: cluster name %q is invalid", spec.Name)
	}
	version := spec.Version
	if version == "" {
		version = DefaultClusterVersion
	}
	if _, ok := parseVersion(version); !ok {
		return "", fmt.Errorf("gkeemu: version %q is not a GKE version such as %s", version, DefaultClusterVersion)
	}
	locations := spec.Locations
	if len(locations) == 0 {
		if region == spec.Location {
			locations = []string{region + "-a", region + "-b", region + "-c"}
		} else {
			locations = []string{spec.Location}
		}
	}
	for _, z := range locations {
		if m := zoneRE.FindStringSubmatch(z); m == nil || m[1] != region {
			return "", fmt.Errorf("gkeemu: cluster location %q is not a zone of %s", z, region)
		}
	}
	ca := spec.CACertificatePEM
	if len(ca) == 0 {
		var err error
		if ca, err = selfSignedCA(spec.Name); err != nil {
			return "", err
		}
	}
	endpoint := spec.Endpoint
	if endpoint == "" {
		endpoint = "127.0.0.1"
	}
	channel := spec.ReleaseChannel
	if channel == "" {
		channel = DefaultReleaseChannel
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	cs := &clusterState{project: spec.Project, location: spec.Location, short: spec.Name}
	if s.clusters[cs.name()] != nil {
		return "", fmt.Errorf("gkeemu: cluster %s exists already", cs.name())
	}
	id := sha256.Sum256([]byte(cs.name()))
	c := &container.Cluster{
		Name:                  spec.Name,
		Id:                    hex.EncodeToString(id[:8]),
		Location:              spec.Location,
		Zone:                  spec.Location,
		Locations:             locations,
		Status:                "RUNNING",
		Endpoint:              endpoint,
		MasterAuth:            &container.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString(ca)},
		CurrentMasterVersion:  version,
		InitialClusterVersion: version,
		CurrentNodeVersion:    version,
		CreateTime:            createTime.Format(time.RFC3339),
		SelfLink:              fmt.Sprintf("%sv1/projects/%s/zones/%s/clusters/%s", linkPlaceholder, spec.Project, spec.Location, spec.Name),
		Network:               "default",
		Subnetwork:            "default",
		AddonsConfig:          &container.AddonsConfig{},
		ReleaseChannel:        &container.ReleaseChannel{Channel: channel},
		Description:           "Emulated by gkeemu; not a GKE cluster.",
	}
	if spec.Autopilot {
		c.Autopilot = &container.Autopilot{Enabled: true}
	}
	if !spec.NoWorkloadIdentity {
		c.WorkloadIdentityConfig = &container.WorkloadIdentityConfig{WorkloadPool: spec.Project + ".svc.id.goog"}
	}
	if spec.AgentSandbox {
		c.AddonsConfig.AgentSandboxConfig = &container.AgentSandboxConfig{Enabled: true}
	}
	if spec.PodSnapshots {
		c.AddonsConfig.PodSnapshotConfig = &container.PodSnapshotConfig{Enabled: true}
	}
	cs.c = c
	cs.versions = []string{version}
	nodeVersions := spec.NodeVersions
	if nodeVersions == nil {
		nodeVersions = DefaultNodeVersions
	}
	for _, v := range nodeVersions {
		if _, ok := parseVersion(v); ok && compareVersions(v, version) < 0 && !contains(cs.versions, v) {
			cs.versions = append(cs.versions, v)
		}
	}
	sortVersionsDesc(cs.versions)
	if !spec.NoDefaultPool {
		np := &container.NodePool{
			Name:             "default-pool",
			InitialNodeCount: 1,
			Config: &container.NodeConfig{
				MachineType: "e2-medium",
				ImageType:   "COS_CONTAINERD",
			},
		}
		p := &poolState{np: np, size: 1}
		req := &request{now: s.opts.Now()}
		if e := s.applyPoolDefaults(req, cs, np); e != nil {
			return "", fmt.Errorf("gkeemu: seeding default-pool: %w", e)
		}
		np.Status = "RUNNING"
		p.touch()
		cs.pools = append(cs.pools, p)
	}
	s.clusters[cs.name()] = cs
	s.order = append(s.order, cs.name())
	return cs.name(), nil
}

// selfSignedCA makes a throwaway CA certificate (PEM) for a seeded cluster,
// so that clients that parse masterAuth.clusterCaCertificate get a real one.
func selfSignedCA(cluster string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("gkeemu: generating a CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gkeemu cluster CA for " + cluster + " (emulator)"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("gkeemu: creating a CA certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// clusterFor finds the cluster of a route, or answers 404 as GKE does.
func (s *Server) clusterFor(rt route) (*clusterState, *apiError) {
	cs := s.clusters[rt.clusterName()]
	if cs == nil {
		return nil, notFound(rt.clusterName())
	}
	return cs, nil
}

func (s *Server) poolFor(rt route) (*clusterState, *poolState, *apiError) {
	cs, e := s.clusterFor(rt)
	if e != nil {
		return nil, nil, e
	}
	p := cs.pool(rt.pool)
	if p == nil {
		return nil, nil, notFound(rt.poolName())
	}
	return cs, p, nil
}

func (s *Server) clusterView(cs *clusterState) *container.Cluster {
	out := clone(cs.c)
	for _, p := range cs.pools {
		out.NodePools = append(out.NodePools, clone(p.np))
	}
	return out
}

// Inspection and out-of-band changes, for tests. Names are full resource
// names (projects/P/locations/L/clusters/C[/nodePools/N]).

// Cluster returns the cluster as GET would, and whether it exists.
func (s *Server) Cluster(name string) (*container.Cluster, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.opts.Now())
	cs := s.clusters[name]
	if cs == nil {
		return nil, false
	}
	return cloneBase(s.clusterView(cs), s.linkBase()), true
}

func (s *Server) lookupPool(name string) (*clusterState, *poolState, error) {
	cluster, pool, ok := strings.Cut(name, "/nodePools/")
	if !ok {
		return nil, nil, fmt.Errorf("gkeemu: %q is not a node pool name", name)
	}
	cs := s.clusters[cluster]
	if cs == nil {
		return nil, nil, fmt.Errorf("%w: cluster %s", errNoSuch, cluster)
	}
	p := cs.pool(pool)
	if p == nil {
		return nil, nil, fmt.Errorf("%w: node pool %s", errNoSuch, name)
	}
	return cs, p, nil
}

// NodePool returns the node pool as GET would, and whether it exists.
func (s *Server) NodePool(name string) (*container.NodePool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.opts.Now())
	_, p, err := s.lookupPool(name)
	if err != nil {
		return nil, false
	}
	return cloneBase(p.np, s.linkBase()), true
}

// NodePoolSize is the emulator's count of nodes per zone of a pool (what
// the managed instance groups would hold; the container API does not
// report it).
func (s *Server) NodePoolSize(name string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.opts.Now())
	_, p, err := s.lookupPool(name)
	if err != nil {
		return 0, false
	}
	return p.size, true
}

// DeleteNodePool removes a pool at once, as if someone had deleted it
// outside Terraform and the operation had finished.
func (s *Server) DeleteNodePool(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, p, err := s.lookupPool(name)
	if err != nil {
		return err
	}
	cs.pools = removePool(cs.pools, p)
	return nil
}

// EditNodePool changes a pool outside the API (drift, as from the console or
// from GKE itself); the pool gets a new etag.
func (s *Server) EditNodePool(name string, edit func(*container.NodePool)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, p, err := s.lookupPool(name)
	if err != nil {
		return err
	}
	edit(p.np)
	p.touch()
	return nil
}

// SetAgentSandboxAddon turns the add-on on or off outside the API.
func (s *Server) SetAgentSandboxAddon(cluster string, enabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.clusters[cluster]
	if cs == nil {
		return fmt.Errorf("%w: cluster %s", errNoSuch, cluster)
	}
	cs.c.AddonsConfig.AgentSandboxConfig = &container.AgentSandboxConfig{Enabled: enabled}
	return nil
}

// SetPodSnapshots turns GKE Pod snapshots on or off outside the API.
func (s *Server) SetPodSnapshots(cluster string, enabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.clusters[cluster]
	if cs == nil {
		return fmt.Errorf("%w: cluster %s", errNoSuch, cluster)
	}
	cs.c.AddonsConfig.PodSnapshotConfig = &container.PodSnapshotConfig{Enabled: enabled}
	return nil
}

func removePool(pools []*poolState, p *poolState) []*poolState {
	out := pools[:0]
	for _, x := range pools {
		if x != p {
			out = append(out, x)
		}
	}
	return out
}
