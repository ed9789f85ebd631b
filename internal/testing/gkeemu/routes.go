package gkeemu

import (
	"slices"
	"strings"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
)

// API method IDs the emulator serves besides those the provider calls
// (gkeapi's Method constants, which key the same counters and faults).
const (
	MethodClustersList   = "projects.locations.clusters.list"
	MethodOperationsList = "projects.locations.operations.list"
)

// handlers are the API methods the emulator serves, by request pattern: the
// HTTP method, the path below projects/P/locations/L with * for each name,
// and the custom verb after a colon.
var handlers = map[string]struct {
	method string // API method ID
	handle func(*Server, *request) (any, *apiError)
}{
	"GET operations":                             {MethodOperationsList, (*Server).listOperations},
	"GET operations/*":                           {gkeapi.MethodOperationsGet, (*Server).getOperation},
	"GET clusters":                               {MethodClustersList, (*Server).listClusters},
	"GET clusters/*":                             {gkeapi.MethodClustersGet, (*Server).getCluster},
	"PUT clusters/*":                             {gkeapi.MethodClustersUpdate, (*Server).updateCluster},
	"POST clusters/*:setAddons":                  {gkeapi.MethodClustersSetAddons, (*Server).setAddons},
	"GET clusters/*/nodePools":                   {gkeapi.MethodNodePoolsList, (*Server).listNodePools},
	"POST clusters/*/nodePools":                  {gkeapi.MethodNodePoolsCreate, (*Server).createNodePool},
	"GET clusters/*/nodePools/*":                 {gkeapi.MethodNodePoolsGet, (*Server).getNodePool},
	"PUT clusters/*/nodePools/*":                 {gkeapi.MethodNodePoolsUpdate, (*Server).updateNodePool},
	"DELETE clusters/*/nodePools/*":              {gkeapi.MethodNodePoolsDelete, (*Server).deleteNodePool},
	"POST clusters/*/nodePools/*:setSize":        {gkeapi.MethodNodePoolsSetSize, (*Server).setNodePoolSize},
	"POST clusters/*/nodePools/*:setAutoscaling": {gkeapi.MethodNodePoolsSetAutoscale, (*Server).setNodePoolAutoscaling},
	"POST clusters/*/nodePools/*:setManagement":  {gkeapi.MethodNodePoolsSetManage, (*Server).setNodePoolManagement},
}

// route is a parsed request path.
type route struct {
	method   string // API method ID
	handle   func(*Server, *request) (any, *apiError)
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
	// The pattern names the collections and stars the names between them:
	// clusters/C/nodePools/N is clusters/*/nodePools/*.
	r := route{project: seg[1], location: seg[3]}
	pattern := slices.Clone(seg[4:])
	for i := 1; i < len(pattern); i += 2 {
		pattern[i] = "*"
	}
	key := httpMethod + " " + strings.Join(pattern, "/")
	if verb != "" {
		key += ":" + verb
	}
	h, ok := handlers[key]
	if !ok {
		return route{}, unimplemented
	}
	r.method, r.handle = h.method, h.handle
	switch {
	case seg[4] == "operations" && len(seg) == 6:
		r.op = seg[5]
	case seg[4] == "clusters" && len(seg) >= 6:
		r.cluster = seg[5]
		if len(seg) == 8 {
			r.pool = seg[7]
		}
	}
	return r, nil
}

// dispatch runs the handler of an already authenticated request. It is
// called with s.mu held and operations advanced to req.now.
func (s *Server) dispatch(req *request) (any, *apiError) { return req.route.handle(s, req) }
