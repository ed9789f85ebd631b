package gkeemu

import (
	"net/http"
	"strings"
)

// API method IDs the emulator serves, as GKE's reference names them. They
// key the request counters and fault injection.
const (
	MethodClustersGet           = "projects.locations.clusters.get"
	MethodClustersList          = "projects.locations.clusters.list"
	MethodClustersUpdate        = "projects.locations.clusters.update"
	MethodClustersSetAddons     = "projects.locations.clusters.setAddons"
	MethodNodePoolsCreate       = "projects.locations.clusters.nodePools.create"
	MethodNodePoolsGet          = "projects.locations.clusters.nodePools.get"
	MethodNodePoolsList         = "projects.locations.clusters.nodePools.list"
	MethodNodePoolsUpdate       = "projects.locations.clusters.nodePools.update"
	MethodNodePoolsDelete       = "projects.locations.clusters.nodePools.delete"
	MethodNodePoolsSetSize      = "projects.locations.clusters.nodePools.setSize"
	MethodNodePoolsSetAutoscale = "projects.locations.clusters.nodePools.setAutoscaling"
	MethodNodePoolsSetManage    = "projects.locations.clusters.nodePools.setManagement"
	MethodOperationsGet         = "projects.locations.operations.get"
	MethodOperationsList        = "projects.locations.operations.list"
)

// route is a parsed request path.
type route struct {
	method   string // API method ID
	project  string
	location string
	cluster  string // short name, "" for location-level methods
	pool     string // short name, "" unless a node pool method
	op       string // short operation name for operations.get
}

func (r route) clusterName() string {
	return "projects/" + r.project + "/locations/" + r.location + "/clusters/" + r.cluster
}

func (r route) poolName() string { return r.clusterName() + "/nodePools/" + r.pool }

// parseRoute maps an HTTP method and path onto an API method. Paths are those of
// the generated client: /v1/projects/P/locations/L/... with custom verbs
// after a colon (":setSize").
func parseRoute(httpMethod, path string) (route, *apiError) {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return route{}, errorf("NOT_FOUND", "gkeemu (emulator) serves only container/v1 paths under /v1/projects/...; got %q.", path)
	}
	rest = strings.TrimSuffix(rest, "/")
	verb := ""
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		rest, verb = rest[:i], rest[i+1:]
	}
	seg := strings.Split(rest, "/")
	unimplemented := errorf("UNIMPLEMENTED", "gkeemu (emulator) does not implement %s %s; it serves the subset of "+
		"container/v1 the agentsandbox provider calls (clusters get/list/update/setAddons, node pools "+
		"create/get/list/update/setSize/setAutoscaling/setManagement/delete, operations get/list), on "+
		"projects/*/locations/* paths.", httpMethod, path)
	if len(seg) < 4 || seg[0] != "projects" || seg[2] != "locations" {
		return route{}, unimplemented
	}
	for _, s := range seg {
		if s == "" {
			return route{}, errorf("INVALID_ARGUMENT", "Malformed resource name in path %q.", path)
		}
	}
	r := route{project: seg[1], location: seg[3]}
	is := func(m string, n int, v string) bool { return httpMethod == m && len(seg) == n && verb == v }
	switch {
	case len(seg) >= 5 && seg[4] == "operations":
		switch {
		case is(http.MethodGet, 5, ""):
			r.method = MethodOperationsList
		case is(http.MethodGet, 6, ""):
			r.method, r.op = MethodOperationsGet, seg[5]
		}
	case len(seg) >= 5 && seg[4] == "clusters":
		if len(seg) >= 6 {
			r.cluster = seg[5]
		}
		if len(seg) >= 8 && seg[6] == "nodePools" {
			r.pool = seg[7]
		}
		switch {
		case is(http.MethodGet, 5, ""):
			r.method = MethodClustersList
		case is(http.MethodGet, 6, ""):
			r.method = MethodClustersGet
		case is(http.MethodPut, 6, ""):
			r.method = MethodClustersUpdate
		case is(http.MethodPost, 6, "setAddons"):
			r.method = MethodClustersSetAddons
		case len(seg) == 7 && seg[6] == "nodePools" && is(http.MethodGet, 7, ""):
			r.method = MethodNodePoolsList
		case len(seg) == 7 && seg[6] == "nodePools" && is(http.MethodPost, 7, ""):
			r.method = MethodNodePoolsCreate
		case len(seg) == 8 && seg[6] == "nodePools":
			switch {
			case is(http.MethodGet, 8, ""):
				r.method = MethodNodePoolsGet
			case is(http.MethodPut, 8, ""):
				r.method = MethodNodePoolsUpdate
			case is(http.MethodDelete, 8, ""):
				r.method = MethodNodePoolsDelete
			case is(http.MethodPost, 8, "setSize"):
				r.method = MethodNodePoolsSetSize
			case is(http.MethodPost, 8, "setAutoscaling"):
				r.method = MethodNodePoolsSetAutoscale
			case is(http.MethodPost, 8, "setManagement"):
				r.method = MethodNodePoolsSetManage
			}
		}
	}
	if r.method == "" {
		return route{}, unimplemented
	}
	return r, nil
}

// dispatch runs the handler of an already authenticated request. It is
// called with s.mu held and operations advanced to req.now.
func (s *Server) dispatch(req *request) (any, *apiError) {
	switch req.route.method {
	case MethodClustersGet:
		return s.getCluster(req)
	case MethodClustersList:
		return s.listClusters(req)
	case MethodClustersUpdate:
		return s.updateCluster(req)
	case MethodClustersSetAddons:
		return s.setAddons(req)
	case MethodNodePoolsCreate:
		return s.createNodePool(req)
	case MethodNodePoolsGet:
		return s.getNodePool(req)
	case MethodNodePoolsList:
		return s.listNodePools(req)
	case MethodNodePoolsUpdate:
		return s.updateNodePool(req)
	case MethodNodePoolsDelete:
		return s.deleteNodePool(req)
	case MethodNodePoolsSetSize:
		return s.setNodePoolSize(req)
	case MethodNodePoolsSetAutoscale:
		return s.setNodePoolAutoscaling(req)
	case MethodNodePoolsSetManage:
		return s.setNodePoolManagement(req)
	case MethodOperationsGet:
		return s.getOperation(req)
	case MethodOperationsList:
		return s.listOperations(req)
	}
	return nil, errorf("UNIMPLEMENTED", "gkeemu (emulator) has no handler for %s.", req.route.method)
}
