package gkeemu

import (
	"encoding/json"

	"google.golang.org/api/container/v1"
)

func (s *Server) getCluster(req *request) (any, *apiError) {
	cs, e := s.clusterFor(req.route)
	if e != nil {
		return nil, e
	}
	return s.clusterView(cs), nil
}

func (s *Server) listClusters(req *request) (any, *apiError) {
	rt := req.route
	out := &container.ListClustersResponse{Clusters: []*container.Cluster{}}
	for _, name := range s.order {
		cs := s.clusters[name]
		if cs.project == rt.project && (rt.location == "-" || cs.location == rt.location) {
			out.Clusters = append(out.Clusters, s.clusterView(cs))
		}
	}
	return out, nil
}

// updateCluster serves Clusters.Update. Of ClusterUpdate's many desired*
// fields only desiredAddonsConfig is modelled; others are refused as
// UNIMPLEMENTED so a test cannot pass while the emulator ignores them.
func (s *Server) updateCluster(req *request) (any, *apiError) {
	cs, e := s.clusterFor(req.route)
	if e != nil {
		return nil, e
	}
	var raw struct {
		Update map[string]json.RawMessage `json:"update"`
	}
	if e := req.decode(&raw, append([]string{"update"}, legacyFields...)...); e != nil {
		return nil, e
	}
	if len(raw.Update) == 0 {
		return nil, invalidArgument("update", "Update must be specified and change something.")
	}
	for k := range raw.Update {
		if k != "desiredAddonsConfig" {
			return nil, errorf("UNIMPLEMENTED", "gkeemu (emulator) does not model update.%s; of ClusterUpdate it "+
				"implements only desiredAddonsConfig.", k)
		}
	}
	var body container.UpdateClusterRequest
	if e := req.decode(&body); e != nil {
		return nil, e
	}
	return s.changeAddons(req, cs, body.Update.DesiredAddonsConfig, raw.Update["desiredAddonsConfig"], "update.desired_addons_config")
}

// setAddons serves Clusters.SetAddons with the same semantics as
// Clusters.Update's desiredAddonsConfig.
func (s *Server) setAddons(req *request) (any, *apiError) {
	cs, e := s.clusterFor(req.route)
	if e != nil {
		return nil, e
	}
	var raw struct {
		AddonsConfig json.RawMessage `json:"addonsConfig"`
	}
	if e := req.decode(&raw, append([]string{"addonsConfig"}, legacyFields...)...); e != nil {
		return nil, e
	}
	var body container.SetAddonsConfigRequest
	if e := req.decode(&body); e != nil {
		return nil, e
	}
	return s.changeAddons(req, cs, body.AddonsConfig, raw.AddonsConfig, "addons_config")
}

// changeAddons merges the add-ons present in the request into the
// cluster's: an add-on absent from the request is left as it is (the
// provider sends only the one it manages). The merge is done on the JSON
// form so that add-ons the emulator has no rule for are still kept.
func (s *Server) changeAddons(req *request, cs *clusterState, desired *container.AddonsConfig, rawDesired json.RawMessage, field string) (any, *apiError) {
	var present map[string]json.RawMessage
	if desired == nil || json.Unmarshal(rawDesired, &present) != nil || len(present) == 0 {
		return nil, invalidArgument(field, "The add-ons configuration must name at least one add-on to change.")
	}
	if asc := desired.AgentSandboxConfig; asc != nil && asc.Enabled {
		if compareVersions(cs.c.CurrentMasterVersion, MinAgentSandboxVersion) < 0 {
			return nil, errorf("FAILED_PRECONDITION", "Agent Sandbox requires GKE version %s or later; cluster %s runs %s. "+
				"Upgrade the control plane first.", MinAgentSandboxVersion, cs.short, cs.c.CurrentMasterVersion)
		}
	}
	// GKE documents a minimum version for Pod snapshots (see
	// MinPodSnapshotsVersion); its other prerequisites (Workload Identity,
	// GKE Sandbox pods, a bucket) are documented as what snapshots need to
	// work, not as refusals of this request, so they are not modelled here.
	if psc := desired.PodSnapshotConfig; psc != nil && psc.Enabled {
		if compareVersions(cs.c.CurrentMasterVersion, MinPodSnapshotsVersion) < 0 {
			return nil, errorf("FAILED_PRECONDITION", "Pod snapshots require GKE version %s or later; cluster %s runs %s. "+
				"Upgrade the control plane first.", MinPodSnapshotsVersion, cs.short, cs.c.CurrentMasterVersion)
		}
	}
	if e := s.checkNotBusy(cs.name(), cs.short); e != nil {
		return nil, e
	}
	cs.c.Status = "RECONCILING"
	return s.startOperation(req, cs, OpUpdateCluster, req.link(cs.project, cs.location, "clusters/"+cs.short), false,
		func() {
			cur, _ := json.Marshal(cs.c.AddonsConfig)
			var merged map[string]json.RawMessage
			_ = json.Unmarshal(cur, &merged)
			if merged == nil {
				merged = map[string]json.RawMessage{}
			}
			for k, v := range present {
				merged[k] = v
			}
			data, _ := json.Marshal(merged)
			next := &container.AddonsConfig{}
			_ = json.Unmarshal(data, next)
			cs.c.AddonsConfig = next
			cs.c.Status = "RUNNING"
		},
		func(*container.Status) { cs.c.Status = "RUNNING" }), nil
}
