package gkeemu

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/api/container/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

var (
	machineTypeRE    = regexp.MustCompile(`^[a-z][a-z0-9]*-[a-z0-9-]+$`)
	serviceAccountRE = regexp.MustCompile(`^[a-z0-9-]+@[a-z0-9.-]+\.iam\.gserviceaccount\.com$|^[^@\s]+@developer\.gserviceaccount\.com$`)
	diskTypes        = []string{"pd-standard", "pd-balanced", "pd-ssd", "pd-extreme", "hyperdisk-balanced"}
	taintEffects     = []string{"NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"}
)

// Legacy fields every request type carries next to the resource name.
var legacyFields = []string{"name", "projectId", "zone", "clusterId", "nodePoolId", "parent"}

func isGVisor(np *container.NodePool) bool {
	return np.Config != nil && np.Config.SandboxConfig != nil && np.Config.SandboxConfig.Type == "GVISOR"
}

// refuseAutopilot: Autopilot clusters have no user-managed node pools; GKE
// provisions nodes from the workloads' requests
// (https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-overview),
// and GKE Sandbox needs no pool there, only runtimeClassName: gvisor
// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods, "GKE
// Sandbox is ready to use in Autopilot clusters running GKE version
// 1.27.4-gke.800 and later").
func refuseAutopilot(cs *clusterState) *apiError {
	if cs.autopilot() {
		return errorf("FAILED_PRECONDITION", "Node pool operations are not supported on Autopilot cluster %s: "+
			"Autopilot creates and manages nodes itself (GKE Sandbox is available there through runtimeClassName: gvisor).", cs.short)
	}
	return nil
}

// --- create ---

func (s *Server) createNodePool(req *request) (any, *apiError) {
	cs, e := s.clusterFor(req.route)
	if e != nil {
		return nil, e
	}
	var body container.CreateNodePoolRequest
	if e := req.decode(&body, append([]string{"nodePool"}, legacyFields...)...); e != nil {
		return nil, e
	}
	np := body.NodePool
	if np == nil {
		return nil, invalidArgument("node_pool", "Node pool must be specified.")
	}
	if e := refuseAutopilot(cs); e != nil {
		return nil, e
	}
	if !idRE.MatchString(np.Name) {
		return nil, invalidArgument("node_pool.name", "Invalid node pool name %q: it must be 1-40 characters, lowercase "+
			"letters, digits or hyphens, start with a letter and not end with a hyphen.", np.Name)
	}
	if np.Config != nil {
		// Checked before GKE's own marks are added below.
		if e := userTaints(np.Config.Taints, "node_pool.config.taints"); e != nil {
			return nil, e
		}
		if e := validateLabels(np.Config.Labels, isGVisor(np), "node_pool.config.labels"); e != nil {
			return nil, e
		}
	}
	// Server-owned fields are ignored on input, as GKE does.
	np.Status, np.StatusMessage, np.Etag, np.SelfLink, np.InstanceGroupUrls = "", "", "", "", nil
	if e := s.applyPoolDefaults(req, cs, np); e != nil {
		return nil, e
	}
	if e := validatePool(cs, np, "node_pool"); e != nil {
		return nil, e
	}
	if np.InitialNodeCount < 0 {
		return nil, invalidArgument("node_pool.initial_node_count", "initial_node_count must not be negative, got %d.", np.InitialNodeCount)
	}
	if cs.pool(np.Name) != nil {
		return nil, alreadyExists(req.route.clusterName() + "/nodePools/" + np.Name)
	}
	// "The default node pool ... can't use GKE Sandbox if it's the only node
	// pool in the cluster, because GKE-managed system workloads must run
	// separately from untrusted sandboxed workloads"
	// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods).
	if isGVisor(np) && !cs.autopilot() && countPools(cs, func(p *poolState) bool { return !isGVisor(p.np) && p.np.Status != "STOPPING" }) == 0 {
		return nil, errorf("FAILED_PRECONDITION", "Cluster %s has no node pool without GKE Sandbox: a Standard cluster "+
			"needs at least one node pool that does not use sandbox_config.type=GVISOR to run system workloads. "+
			"Create a regular node pool first.", cs.short)
	}
	if e := s.checkNotBusy(cs.name(), cs.short); e != nil {
		return nil, e
	}

	np.Status = "PROVISIONING"
	p := &poolState{np: np, size: np.InitialNodeCount}
	p.touch()
	cs.pools = append(cs.pools, p)
	return s.startOperation(req, cs, OpCreateNodePool, np.SelfLink, false,
		func() {
			np.Status = "RUNNING"
			p.touch()
		},
		func(st *container.Status) {
			// GKE leaves a pool whose creation failed in ERROR state; only
			// deleting it is possible then.
			np.Status = "ERROR"
			np.StatusMessage = st.Message
			p.touch()
		}), nil
}

func countPools(cs *clusterState, pred func(*poolState) bool) int {
	n := 0
	for _, p := range cs.pools {
		if pred(p) {
			n++
		}
	}
	return n
}

// applyPoolDefaults fills what GKE fills on creation.
func (s *Server) applyPoolDefaults(req *request, cs *clusterState, np *container.NodePool) *apiError {
	if np.Config == nil {
		np.Config = &container.NodeConfig{}
	}
	c := np.Config
	c.ImageType = strings.ToUpper(c.ImageType)
	if c.ImageType == "" {
		c.ImageType = "COS_CONTAINERD"
	}
	if c.MachineType == "" {
		c.MachineType = "e2-medium"
	}
	if c.DiskSizeGb == 0 {
		c.DiskSizeGb = 100
	}
	if c.DiskType == "" {
		c.DiskType = "pd-balanced"
	}
	if c.ServiceAccount == "" {
		c.ServiceAccount = "default"
	}
	if len(c.OauthScopes) == 0 {
		c.OauthScopes = slices.Clone(DefaultOauthScopes)
	}
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	c.Metadata["disable-legacy-endpoints"] = "true"
	if c.ShieldedInstanceConfig == nil {
		// GKE's default: integrity monitoring on, secure boot off.
		c.ShieldedInstanceConfig = &container.ShieldedInstanceConfig{EnableIntegrityMonitoring: true}
	}
	if c.WorkloadMetadataConfig == nil && cs.c.WorkloadIdentityConfig != nil {
		c.WorkloadMetadataConfig = &container.WorkloadMetadataConfig{Mode: "GKE_METADATA"}
	}
	if c.SandboxConfig != nil && (c.SandboxConfig.Type == "" || c.SandboxConfig.Type == "UNSPECIFIED") {
		c.SandboxConfig = nil
	}
	if np.Management == nil {
		np.Management = &container.NodeManagement{AutoRepair: true, AutoUpgrade: true}
	}
	if np.UpgradeSettings == nil {
		np.UpgradeSettings = &container.UpgradeSettings{MaxSurge: 1}
	}
	if np.UpgradeSettings.Strategy == "" {
		np.UpgradeSettings.Strategy = "SURGE"
	}
	if a := np.Autoscaling; a != nil {
		if !a.Enabled {
			np.Autoscaling = nil
		} else if a.LocationPolicy == "" {
			a.LocationPolicy = "BALANCED"
		}
	}
	if len(np.Locations) == 0 {
		np.Locations = slices.Clone(cs.c.Locations)
	}
	v, e := resolveVersion(cs, np.Version, "node_pool.version")
	if e != nil {
		return e
	}
	np.Version = v
	if np.MaxPodsConstraint == nil {
		np.MaxPodsConstraint = &container.MaxPodsConstraint{MaxPodsPerNode: 110}
	}
	if np.PodIpv4CidrSize == 0 {
		np.PodIpv4CidrSize = 24
	}
	np.SelfLink = req.link(cs.project, cs.location, "clusters/"+cs.short+"/nodePools/"+np.Name)
	np.InstanceGroupUrls = instanceGroupURLs(cs, np)
	addSandboxMarks(np)
	return nil
}

// instanceGroupURLs are what GKE reports: one managed instance group per
// zone, on the Compute Engine API. Nothing serves them.
func instanceGroupURLs(cs *clusterState, np *container.NodePool) []string {
	urls := make([]string, 0, len(np.Locations))
	for _, z := range np.Locations {
		urls = append(urls, fmt.Sprintf("https://www.googleapis.com/compute/v1/projects/%s/zones/%s/instanceGroupManagers/gke-%s-%s-%s-grp",
			cs.project, z, cs.short, np.Name, cs.c.Id[:8]))
	}
	return urls
}

// addSandboxMarks puts GKE's own label and taint on a gVisor pool, as GKE
// does on creation and keeps doing across label and taint updates
// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods:
// sandboxed nodes carry the label sandbox.gke.io/runtime=gvisor and the
// taint sandbox.gke.io/runtime=gvisor:NoSchedule). MICROVM pools get none:
// no public GKE documentation says which marks they carry.
func addSandboxMarks(np *container.NodePool) {
	if !isGVisor(np) {
		return
	}
	c := np.Config
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.Labels[SandboxKey] = SandboxValue
	for _, t := range c.Taints {
		if t.Key == SandboxKey {
			return
		}
	}
	c.Taints = append(c.Taints, &container.NodeTaint{Key: SandboxKey, Value: SandboxValue, Effect: "NO_SCHEDULE"})
}

// validatePool checks a complete pool (after defaults or an update) against
// GKE's rules. field is the request field of the pool, for error details.
func validatePool(cs *clusterState, np *container.NodePool, field string) *apiError {
	if e := validateNodeConfig(cs, np.Config, field+".config"); e != nil {
		return e
	}
	// gVisor pools need Container-Optimized OS with containerd
	// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods,
	// "From the Image type drop-down list, select Container-Optimized OS with
	// Containerd (cos_containerd)").
	if isGVisor(np) && np.Config.ImageType != "COS_CONTAINERD" {
		return invalidArgument(field+".config.image_type", "Node pool %q uses GKE Sandbox (sandbox_config.type=GVISOR), "+
			"which requires image type COS_CONTAINERD; got %q.", np.Name, np.Config.ImageType)
	}
	if e := validateAutoscaling(np.Autoscaling, field+".autoscaling"); e != nil {
		return e
	}
	if e := validateLocations(cs, np.Locations, field+".locations"); e != nil {
		return e
	}
	if e := validateManagement(cs, np.Management, field+".management"); e != nil {
		return e
	}
	if u := np.UpgradeSettings; u != nil {
		if u.MaxSurge < 0 || u.MaxUnavailable < 0 {
			return invalidArgument(field+".upgrade_settings", "max_surge and max_unavailable must not be negative.")
		}
		if u.MaxSurge == 0 && u.MaxUnavailable == 0 && u.Strategy != "BLUE_GREEN" {
			return invalidArgument(field+".upgrade_settings", "max_surge and max_unavailable cannot both be 0: "+
				"an upgrade could never make progress.")
		}
	}
	return nil
}

// validateNodeConfig checks the node config fields the provider sets. User
// taints with GKE's own key are refused before GKE's marks are added
// (userTaints); here GKE's own taint is accepted.
func validateNodeConfig(cs *clusterState, c *container.NodeConfig, field string) *apiError {
	if c.SandboxConfig != nil {
		switch c.SandboxConfig.Type {
		case "GVISOR":
		case "MICROVM":
			// In GKE's published API (container/v1 discovery document,
			// schema SandboxConfig: "Run sandbox using MicroVM"), and
			// nowhere in GKE's public documentation reachable when this was
			// written: the emulator stores the type and models no rule for
			// it (no image requirement, no label or taint GKE would add, no
			// "not the only pool" rule), rather than invent one. The rules
			// above and below that cite GKE Sandbox are gVisor's.
		default:
			return invalidArgument(field+".sandbox_config.type", "Invalid sandbox type %q.", c.SandboxConfig.Type)
		}
	}
	if !machineTypeRE.MatchString(c.MachineType) {
		return invalidArgument(field+".machine_type", "Invalid machine type %q.", c.MachineType)
	}
	if c.DiskSizeGb < 10 {
		return invalidArgument(field+".disk_size_gb", "Disk size must be at least 10 GB, got %d.", c.DiskSizeGb)
	}
	if !slices.Contains(diskTypes, c.DiskType) {
		return invalidArgument(field+".disk_type", "Invalid disk type %q; valid types are %s.", c.DiskType, strings.Join(diskTypes, ", "))
	}
	if c.Spot && c.Preemptible {
		return invalidArgument(field+".spot", "spot and preemptible cannot both be set; spot VMs replace preemptible VMs.")
	}
	if sa := c.ServiceAccount; sa != "default" && !serviceAccountRE.MatchString(sa) {
		return invalidArgument(field+".service_account", "Service account %q is not a service account email (or \"default\").", sa)
	}
	for _, sc := range c.OauthScopes {
		if !strings.HasPrefix(sc, "https://www.googleapis.com/auth/") {
			return invalidArgument(field+".oauth_scopes", "OAuth scope %q is not a scope URL such as "+
				"https://www.googleapis.com/auth/cloud-platform.", sc)
		}
	}
	if w := c.WorkloadMetadataConfig; w != nil {
		switch w.Mode {
		case "", "MODE_UNSPECIFIED", "GCE_METADATA":
		case "GKE_METADATA":
			if cs.c.WorkloadIdentityConfig == nil || cs.c.WorkloadIdentityConfig.WorkloadPool == "" {
				return invalidArgument(field+".workload_metadata_config.mode", "Workload Identity is not enabled on "+
					"cluster %s; it must be enabled (workload_identity_config.workload_pool) to use the GKE metadata "+
					"server (mode GKE_METADATA).", cs.short)
			}
		default:
			return invalidArgument(field+".workload_metadata_config.mode", "Invalid workload metadata mode %q.", w.Mode)
		}
	}
	if e := validateLabels(c.Labels, c.SandboxConfig != nil, field+".labels"); e != nil {
		return e
	}
	return validateTaints(c.Taints, field+".taints", true)
}

// validateLabels: GKE puts the label sandbox.gke.io/runtime=gvisor on the
// nodes of gVisor pools itself and schedules gvisor pods there by it
// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods); a
// user's label with that key is refused on other pools. That GKE refuses it
// from the API (rather than overwriting it) is what users report for the
// taint (crossplane-contrib/provider-gcp#491), not a documented rule.
func validateLabels(labels map[string]string, gvisor bool, field string) *apiError {
	for k, v := range labels {
		if errs := k8svalidation.IsQualifiedName(k); len(errs) > 0 {
			return invalidArgument(field, "Invalid node label key %q: %s.", k, strings.Join(errs, "; "))
		}
		if errs := k8svalidation.IsValidLabelValue(v); len(errs) > 0 {
			return invalidArgument(field, "Invalid node label value %q for key %q: %s.", v, k, strings.Join(errs, "; "))
		}
		if k == SandboxKey && (!gvisor || v != SandboxValue) {
			return invalidArgument(field, "Node label %q is reserved for GKE Sandbox; GKE sets %s=%s on gVisor node pools itself.",
				k, SandboxKey, SandboxValue)
		}
	}
	return nil
}

// validateTaints checks user taints. GKE adds the taint
// sandbox.gke.io/runtime=gvisor:NoSchedule to gVisor nodes itself
// (https://cloud.google.com/kubernetes-engine/docs/how-to/sandbox-pods,
// which has pods tolerate it); the refusal of that key from users follows
// crossplane-contrib/provider-gcp#491. GKE's own sandbox taint is allowed only
// when it is the one GKE added (allowOwn), which is how a pool's stored
// taints are re-validated.
func validateTaints(taints []*container.NodeTaint, field string, allowOwn bool) *apiError {
	for i, t := range taints {
		if t == nil {
			return invalidArgument(fmt.Sprintf("%s[%d]", field, i), "Empty taint.")
		}
		f := fmt.Sprintf("%s[%d]", field, i)
		if t.Key == SandboxKey {
			if allowOwn && t.Value == SandboxValue && t.Effect == "NO_SCHEDULE" {
				continue
			}
			return invalidArgument(f+".key", "Taint key %q is reserved for GKE Sandbox: GKE adds the taint "+
				"%s=%s:NoSchedule to gVisor node pools itself. Remove this taint.", SandboxKey, SandboxKey, SandboxValue)
		}
		if errs := k8svalidation.IsQualifiedName(t.Key); len(errs) > 0 {
			return invalidArgument(f+".key", "Invalid taint key %q: %s.", t.Key, strings.Join(errs, "; "))
		}
		if errs := k8svalidation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return invalidArgument(f+".value", "Invalid taint value %q: %s.", t.Value, strings.Join(errs, "; "))
		}
		if !slices.Contains(taintEffects, t.Effect) {
			return invalidArgument(f+".effect", "Invalid taint effect %q; valid effects are %s.", t.Effect, strings.Join(taintEffects, ", "))
		}
	}
	return nil
}

// userTaints rejects GKE's own taint key in a request; GKE refuses it from
// users even with GKE's own value.
func userTaints(taints []*container.NodeTaint, field string) *apiError {
	for i, t := range taints {
		if t != nil && t.Key == SandboxKey {
			return invalidArgument(fmt.Sprintf("%s[%d].key", field, i), "Taint key %q is reserved for GKE Sandbox: GKE adds "+
				"the taint %s=%s:NoSchedule to gVisor node pools itself. Remove this taint.", SandboxKey, SandboxKey, SandboxValue)
		}
	}
	return validateTaints(taints, field, false)
}

func validateAutoscaling(a *container.NodePoolAutoscaling, field string) *apiError {
	if a == nil || !a.Enabled {
		return nil
	}
	perZone := a.MinNodeCount != 0 || a.MaxNodeCount != 0
	total := a.TotalMinNodeCount != 0 || a.TotalMaxNodeCount != 0
	switch {
	case perZone && total:
		return invalidArgument(field, "Autoscaling limits are either per zone (min_node_count, max_node_count) or "+
			"total (total_min_node_count, total_max_node_count), not both.")
	case a.MinNodeCount < 0 || a.MaxNodeCount < 0 || a.TotalMinNodeCount < 0 || a.TotalMaxNodeCount < 0:
		return invalidArgument(field, "Autoscaling limits must not be negative.")
	case total && a.TotalMaxNodeCount == 0, !total && a.MaxNodeCount == 0:
		return invalidArgument(field, "Autoscaling needs a maximum node count greater than 0.")
	case a.MinNodeCount > a.MaxNodeCount:
		return invalidArgument(field+".min_node_count", "min_node_count (%d) must not exceed max_node_count (%d).", a.MinNodeCount, a.MaxNodeCount)
	case a.TotalMinNodeCount > a.TotalMaxNodeCount:
		return invalidArgument(field+".total_min_node_count", "total_min_node_count (%d) must not exceed total_max_node_count (%d).",
			a.TotalMinNodeCount, a.TotalMaxNodeCount)
	// "Maximum number of nodes per node pool in a zone: 1,000"
	// (https://cloud.google.com/kubernetes-engine/quotas).
	case a.MaxNodeCount > 1000:
		return invalidArgument(field+".max_node_count", "max_node_count must be at most 1000 per zone.")
	}
	switch a.LocationPolicy {
	case "", "BALANCED", "ANY", "LOCATION_POLICY_UNSPECIFIED":
	default:
		return invalidArgument(field+".location_policy", "Invalid location policy %q; valid policies are BALANCED and ANY.", a.LocationPolicy)
	}
	return nil
}

func validateLocations(cs *clusterState, locs []string, field string) *apiError {
	region := regionOf(cs.location)
	seen := map[string]bool{}
	for _, z := range locs {
		m := zoneRE.FindStringSubmatch(z)
		if m == nil {
			return invalidArgument(field, "Node location %q is not a zone (such as %s-a).", z, region)
		}
		if m[1] != region {
			return invalidArgument(field, "Node location %q is not in the cluster's region %s.", z, region)
		}
		if seen[z] {
			return invalidArgument(field, "Node location %q is listed twice.", z)
		}
		seen[z] = true
	}
	return nil
}

func validateManagement(cs *clusterState, m *container.NodeManagement, field string) *apiError {
	if m == nil {
		return nil
	}
	// Node auto-upgrade cannot be turned off in a cluster enrolled in a
	// release channel
	// (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels).
	if ch := cs.c.ReleaseChannel; !m.AutoUpgrade && ch != nil && ch.Channel != "" && ch.Channel != "UNSPECIFIED" {
		return invalidArgument(field+".auto_upgrade", "Auto_upgrade must be true when release_channel %s is set: "+
			"node pools of a cluster enrolled in a release channel are always auto-upgraded.", ch.Channel)
	}
	return nil
}

// --- read ---

func (s *Server) getNodePool(req *request) (any, *apiError) {
	_, p, e := s.poolFor(req.route)
	if e != nil {
		return nil, e
	}
	return clone(p.np), nil
}

func (s *Server) listNodePools(req *request) (any, *apiError) {
	cs, e := s.clusterFor(req.route)
	if e != nil {
		return nil, e
	}
	out := &container.ListNodePoolsResponse{NodePools: []*container.NodePool{}}
	for _, p := range cs.pools {
		out.NodePools = append(out.NodePools, clone(p.np))
	}
	return out, nil
}

// --- mutations of an existing pool ---

// mutablePool finds a pool that may be changed now: the cluster is not
// Autopilot, the pool is RUNNING, and (unless concurrent) the cluster is
// not busy.
func (s *Server) mutablePool(req *request, concurrent bool) (*clusterState, *poolState, *apiError) {
	cs, p, e := s.poolFor(req.route)
	if e != nil {
		return nil, nil, e
	}
	if e := refuseAutopilot(cs); e != nil {
		return nil, nil, e
	}
	if !concurrent {
		if e := s.checkNotBusy(cs.name(), cs.short); e != nil {
			return nil, nil, e
		}
	}
	switch p.np.Status {
	case "RUNNING", "RUNNING_WITH_ERROR":
	default:
		return nil, nil, errorf("FAILED_PRECONDITION", "Node pool %s is %s; it can be changed only when RUNNING%s.",
			p.np.Name, p.np.Status, map[bool]string{true: " (a pool in ERROR can only be deleted)"}[p.np.Status == "ERROR"])
	}
	return cs, p, nil
}

func (s *Server) updateNodePool(req *request) (any, *apiError) {
	var body container.UpdateNodePoolRequest
	if e := req.decode(&body, append([]string{"etag", "nodeVersion", "imageType", "labels", "taints", "locations",
		"machineType", "diskSizeGb", "diskType", "workloadMetadataConfig", "upgradeSettings"}, legacyFields...)...); e != nil {
		return nil, e
	}
	cs, p, e := s.poolFor(req.route)
	if e != nil {
		return nil, e
	}
	if body.Etag != "" && body.Etag != p.np.Etag {
		return nil, errorf("ABORTED", "Node pool %s was modified since etag %q was read (current etag %q); read it again "+
			"and retry.", p.np.Name, body.Etag, p.np.Etag)
	}
	// The changes, applied to a copy now (to validate the outcome) and to
	// the live pool when the operation is DONE, so that changes committed
	// meanwhile by concurrent operations are kept.
	var edits []func(np *container.NodePool)
	if body.NodeVersion != "" {
		v, e := resolveVersion(cs, body.NodeVersion, "node_version")
		if e != nil {
			return nil, e
		}
		// Nodes cannot be downgraded, only an incomplete upgrade rolled
		// back (https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster,
		// "Downgrading nodes"; the API documents no downgrade).
		if compareVersions(v, p.np.Version) < 0 {
			return nil, invalidArgument("node_version", "Node pool %s is at %s; downgrading it to %s is not supported "+
				"(only an incomplete upgrade can be rolled back).", p.np.Name, p.np.Version, v)
		}
		edits = append(edits, func(np *container.NodePool) { np.Version = v })
	}
	if body.ImageType != "" {
		it := strings.ToUpper(body.ImageType)
		edits = append(edits, func(np *container.NodePool) { np.Config.ImageType = it })
	}
	if body.MachineType != "" {
		edits = append(edits, func(np *container.NodePool) { np.Config.MachineType = body.MachineType })
	}
	if body.DiskSizeGb != 0 {
		edits = append(edits, func(np *container.NodePool) { np.Config.DiskSizeGb = body.DiskSizeGb })
	}
	if body.DiskType != "" {
		edits = append(edits, func(np *container.NodePool) { np.Config.DiskType = body.DiskType })
	}
	if body.Labels != nil {
		labels := body.Labels.Labels
		if e := validateLabels(labels, isGVisor(p.np), "labels.labels"); e != nil {
			return nil, e
		}
		// Replaces the user's labels; GKE's own label stays.
		edits = append(edits, func(np *container.NodePool) {
			np.Config.Labels = map[string]string{}
			for k, v := range labels {
				np.Config.Labels[k] = v
			}
			addSandboxMarks(np)
		})
	}
	if body.Taints != nil {
		taints := body.Taints.Taints
		if e := userTaints(taints, "taints.taints"); e != nil {
			return nil, e
		}
		edits = append(edits, func(np *container.NodePool) {
			np.Config.Taints = nil
			for _, t := range taints {
				np.Config.Taints = append(np.Config.Taints, clone(t))
			}
			addSandboxMarks(np)
		})
	}
	if len(body.Locations) > 0 {
		locs := slices.Clone(body.Locations)
		edits = append(edits, func(np *container.NodePool) {
			np.Locations = locs
			np.InstanceGroupUrls = instanceGroupURLs(cs, np)
		})
	}
	if body.WorkloadMetadataConfig != nil {
		w := clone(body.WorkloadMetadataConfig)
		edits = append(edits, func(np *container.NodePool) { np.Config.WorkloadMetadataConfig = w })
	}
	if body.UpgradeSettings != nil {
		u := clone(body.UpgradeSettings)
		if u.Strategy == "" {
			u.Strategy = "SURGE"
		}
		edits = append(edits, func(np *container.NodePool) { np.UpgradeSettings = u })
	}
	if len(edits) == 0 {
		return nil, invalidArgument("", "The update request for node pool %s changes nothing: set at least one field to update.", p.np.Name)
	}
	apply := func(np *container.NodePool) {
		for _, edit := range edits {
			edit(np)
		}
	}
	preview := clone(p.np)
	apply(preview)
	if e := validatePool(cs, preview, "update"); e != nil {
		return nil, e
	}
	if _, _, e := s.mutablePool(req, false); e != nil {
		return nil, e
	}
	p.np.Status = "RECONCILING"
	return s.startOperation(req, cs, OpUpgradeNodes, p.np.SelfLink, false,
		func() {
			apply(p.np)
			p.np.Status = "RUNNING"
			p.touch()
		},
		func(*container.Status) { p.np.Status = "RUNNING" }), nil
}

func (s *Server) setNodePoolSize(req *request) (any, *apiError) {
	var body container.SetNodePoolSizeRequest
	if e := req.decode(&body, append([]string{"nodeCount"}, legacyFields...)...); e != nil {
		return nil, e
	}
	if body.NodeCount < 0 {
		return nil, invalidArgument("node_count", "node_count must not be negative, got %d.", body.NodeCount)
	}
	cs, p, e := s.mutablePool(req, false)
	if e != nil {
		return nil, e
	}
	n := body.NodeCount
	return s.startOperation(req, cs, OpSetNodePoolSize, p.np.SelfLink, false,
		func() {
			p.size = n
			p.touch()
		}, nil), nil
}

func (s *Server) setNodePoolAutoscaling(req *request) (any, *apiError) {
	var body container.SetNodePoolAutoscalingRequest
	if e := req.decode(&body, append([]string{"autoscaling"}, legacyFields...)...); e != nil {
		return nil, e
	}
	if body.Autoscaling == nil {
		return nil, invalidArgument("autoscaling", "autoscaling must be specified.")
	}
	if e := validateAutoscaling(body.Autoscaling, "autoscaling"); e != nil {
		return nil, e
	}
	cs, p, e := s.mutablePool(req, false)
	if e != nil {
		return nil, e
	}
	a := clone(body.Autoscaling)
	if a.Enabled && a.LocationPolicy == "" {
		a.LocationPolicy = "BALANCED"
	}
	return s.startOperation(req, cs, OpUpdateCluster, p.np.SelfLink, false,
		func() {
			if !a.Enabled {
				p.np.Autoscaling = nil
			} else {
				p.np.Autoscaling = a
				// The autoscaler brings the pool within its limits.
				lo, hi := a.MinNodeCount, a.MaxNodeCount
				if zones := int64(len(p.np.Locations)); a.TotalMaxNodeCount > 0 && zones > 0 {
					lo, hi = (a.TotalMinNodeCount+zones-1)/zones, a.TotalMaxNodeCount/zones
				}
				p.size = min(max(p.size, lo), hi)
			}
			p.touch()
		}, nil), nil
}

func (s *Server) setNodePoolManagement(req *request) (any, *apiError) {
	var body container.SetNodePoolManagementRequest
	if e := req.decode(&body, append([]string{"management"}, legacyFields...)...); e != nil {
		return nil, e
	}
	if body.Management == nil {
		return nil, invalidArgument("management", "management must be specified.")
	}
	cs, p, e := s.mutablePool(req, true)
	if e != nil {
		return nil, e
	}
	if e := validateManagement(cs, body.Management, "management"); e != nil {
		return nil, e
	}
	m := clone(body.Management)
	return s.startOperation(req, cs, OpSetNodePoolManage, p.np.SelfLink, true,
		func() {
			p.np.Management = m
			p.touch()
		}, nil), nil
}

func (s *Server) deleteNodePool(req *request) (any, *apiError) {
	cs, p, e := s.poolFor(req.route)
	if e != nil {
		return nil, e
	}
	if e := refuseAutopilot(cs); e != nil {
		return nil, e
	}
	if p.np.Status == "STOPPING" {
		return nil, errorf("FAILED_PRECONDITION", "Node pool %s is already being deleted.", p.np.Name)
	}
	// The same rule as at create (sandbox-pods how-to, above): the last
	// regular pool of a cluster with gVisor pools stays.
	if !isGVisor(p.np) && !cs.autopilot() &&
		countPools(cs, func(x *poolState) bool { return x != p && !isGVisor(x.np) && x.np.Status != "STOPPING" }) == 0 &&
		countPools(cs, func(x *poolState) bool { return isGVisor(x.np) && x.np.Status != "STOPPING" }) > 0 {
		return nil, errorf("FAILED_PRECONDITION", "Node pool %s is the last node pool of cluster %s without GKE Sandbox; "+
			"a Standard cluster with gVisor node pools needs at least one regular node pool for system workloads. "+
			"Delete the gVisor node pools first, or create another regular pool.", p.np.Name, cs.short)
	}
	if e := s.checkNotBusy(cs.name(), cs.short); e != nil {
		return nil, e
	}
	prev := p.np.Status
	p.np.Status = "STOPPING"
	return s.startOperation(req, cs, OpDeleteNodePool, p.np.SelfLink, false,
		func() { cs.pools = removePool(cs.pools, p) },
		func(*container.Status) { p.np.Status = prev }), nil
}
