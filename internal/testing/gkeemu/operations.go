package gkeemu

import (
	"fmt"
	"time"

	"google.golang.org/api/container/v1"
)

// Operation types, as container/v1 names them.
const (
	OpCreateNodePool    = "CREATE_NODE_POOL"
	OpDeleteNodePool    = "DELETE_NODE_POOL"
	OpUpgradeNodes      = "UPGRADE_NODES" // GKE uses it for most node pool updates
	OpSetNodePoolSize   = "SET_NODE_POOL_SIZE"
	OpSetNodePoolManage = "SET_NODE_POOL_MANAGEMENT"
	OpUpdateCluster     = "UPDATE_CLUSTER"
	OpUpgradeMaster     = "UPGRADE_MASTER"
)

// operation is one long-running operation and what it does to the state
// when it ends. Its status is derived from the clock: PENDING for the
// pending duration, then RUNNING, then DONE, at which point commit (or, for
// an operation made to fail, rollback) runs exactly once.
type operation struct {
	op      *container.Operation
	cluster string // full cluster name
	start   time.Time
	pending time.Duration
	running time.Duration
	// concurrent operations neither wait for nor block others: GKE documents
	// SET_NODE_POOL_MANAGEMENT as metadata-only and concurrent.
	concurrent bool
	commit     func()
	rollback   func(*container.Status)
	failure    *container.Status
	done       bool
}

type opFailure struct {
	opType  string
	status  string
	message string
}

func (o *operation) statusAt(now time.Time) string {
	switch {
	case o.done:
		return "DONE"
	case now.Before(o.start.Add(o.pending)):
		return "PENDING"
	default:
		return "RUNNING"
	}
}

func (o *operation) endsAt() time.Time { return o.start.Add(o.pending + o.running) }

// advance finishes every operation whose time has come, in start order, so
// that effects apply in the order GKE would have applied them.
func (s *Server) advance(now time.Time) {
	for _, o := range s.ops {
		if o.done || now.Before(o.endsAt()) {
			continue
		}
		o.done = true
		o.op.Status = "DONE"
		o.op.EndTime = o.endsAt().UTC().Format(time.RFC3339Nano)
		if o.failure != nil {
			o.op.Error = o.failure
			// GKE also repeats the error in statusMessage.
			o.op.StatusMessage = o.failure.Message
			if o.rollback != nil {
				o.rollback(o.failure)
			}
			s.logf("gkeemu: operation %s (%s) DONE with error: %s", o.op.Name, o.op.OperationType, o.failure.Message)
			continue
		}
		if o.commit != nil {
			o.commit()
		}
		s.logf("gkeemu: operation %s (%s) DONE", o.op.Name, o.op.OperationType)
	}
}

// busyWith returns the operation that keeps the cluster busy, if any.
func (s *Server) busyWith(cluster string) *operation {
	for _, o := range s.ops {
		if !o.done && !o.concurrent && o.cluster == cluster {
			return o
		}
	}
	return nil
}

// busyVerbs words GKE's "busy" refusal per operation type.
var busyVerbs = map[string]string{
	OpCreateNodePool:  "creating a node pool in",
	OpDeleteNodePool:  "deleting a node pool from",
	OpUpgradeNodes:    "upgrading nodes of",
	OpSetNodePoolSize: "resizing a node pool of",
	OpUpdateCluster:   "updating",
	OpUpgradeMaster:   "upgrading",
}

// checkNotBusy refuses a mutation while another operation runs on the
// cluster, with GKE's status and wording.
func (s *Server) checkNotBusy(cluster, shortName string) *apiError {
	o := s.busyWith(cluster)
	if o == nil {
		return nil
	}
	verb := busyVerbs[o.op.OperationType]
	if verb == "" {
		verb = "operating on"
	}
	return errorf("FAILED_PRECONDITION", "Operation %s is currently %s cluster %s. Please wait and try again once it is done.",
		o.op.Name, verb, shortName)
}

// startOperation records a new operation on a cluster and returns what the
// API answers: the operation in its initial state.
func (s *Server) startOperation(req *request, cs *clusterState, opType, target string, concurrent bool,
	commit func(), rollback func(*container.Status)) *container.Operation {
	s.seq++
	name := fmt.Sprintf("operation-%d-%08x", req.now.UnixMilli(), uint32(s.seq*2654435761))
	o := &operation{
		op: &container.Operation{
			Name:          name,
			OperationType: opType,
			SelfLink:      req.link(cs.project, cs.location, "operations/"+name),
			TargetLink:    target,
			Location:      cs.location,
			Zone:          cs.location,
			StartTime:     req.now.UTC().Format(time.RFC3339Nano),
		},
		cluster:    cs.name(),
		start:      req.now,
		pending:    max(s.opts.PendingDuration, 0),
		running:    max(s.opts.RunningDuration, 0),
		concurrent: concurrent,
		commit:     commit,
		rollback:   rollback,
	}
	for i, f := range s.failNext {
		if f.opType == "" || f.opType == opType {
			o.failure = &container.Status{Code: rpcCode(f.status), Message: f.message}
			s.failNext = append(s.failNext[:i], s.failNext[i+1:]...)
			break
		}
	}
	s.ops = append(s.ops, o)
	s.logf("gkeemu: operation %s (%s) started on %s", name, opType, target)
	// An operation with no duration is DONE in the answer that starts it,
	// as GKE answers some quick mutations.
	s.advance(req.now)
	return s.operationView(o, req.now)
}

func (s *Server) operationView(o *operation, now time.Time) *container.Operation {
	out := clone(o.op)
	out.Status = o.statusAt(now)
	return out
}

func (s *Server) findOperation(project, location, name string) *operation {
	for _, o := range s.ops {
		cs := s.clusters[o.cluster]
		if o.op.Name == name && cs != nil && cs.project == project && (location == "-" || cs.location == location) {
			return o
		}
	}
	return nil
}

func (s *Server) getOperation(req *request) (any, *apiError) {
	rt := req.route
	o := s.findOperation(rt.project, rt.location, rt.op)
	if o == nil {
		return nil, notFound(fmt.Sprintf("projects/%s/locations/%s/operations/%s", rt.project, rt.location, rt.op))
	}
	return s.operationView(o, req.now), nil
}

func (s *Server) listOperations(req *request) (any, *apiError) {
	rt := req.route
	out := &container.ListOperationsResponse{Operations: []*container.Operation{}}
	for _, o := range s.ops {
		cs := s.clusters[o.cluster]
		if cs != nil && cs.project == rt.project && (rt.location == "-" || cs.location == rt.location) {
			out.Operations = append(out.Operations, s.operationView(o, req.now))
		}
	}
	return out, nil
}

// FailNextOperation makes the next operation of opType ("" for any type)
// end in error: it runs its normal course and is DONE with
// error {code: status, message: message}, as GKE reports a failed node pool
// creation (for instance when quota runs out). status is a canonical code
// name such as "RESOURCE_EXHAUSTED". Effects are rolled back the way GKE
// leaves things: a pool that failed to create stays, in ERROR state.
func (s *Server) FailNextOperation(opType, status, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, &opFailure{opType: opType, status: status, message: message})
}

// StartClusterOperation starts an operation that GKE itself would run (an
// auto-upgrade of the control plane, a repair) on the named cluster,
// RUNNING for d. While it runs, mutations of the cluster and its node
// pools are refused as busy. opType defaults to UPGRADE_MASTER. It returns
// the operation's name.
func (s *Server) StartClusterOperation(cluster, opType string, d time.Duration) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startClusterOperation(cluster, opType, d)
}

// StartClusterOperationBefore arranges for StartClusterOperation(cluster,
// opType, d) to happen just before the first request of API method api
// (one of the Method constants) is served: GKE began its own operation a
// moment before the provider's mutation arrived. Unlike starting it from a
// test's PreConfig, this does not depend on how long the plan takes, so a
// slow (loaded) machine still sees the busy refusal.
func (s *Server) StartClusterOperationBefore(api, cluster, opType string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opTriggers = append(s.opTriggers, opTrigger{api: api, cluster: cluster, opType: opType, d: d})
}

// opTrigger is a pending StartClusterOperationBefore.
type opTrigger struct {
	api, cluster, opType string
	d                    time.Duration
}

// fireTriggers starts the operations waiting for a request of api. Called
// with s.mu held.
func (s *Server) fireTriggers(api string) {
	kept := s.opTriggers[:0]
	for _, t := range s.opTriggers {
		if t.api != api {
			kept = append(kept, t)
			continue
		}
		if _, err := s.startClusterOperation(t.cluster, t.opType, t.d); err != nil {
			s.logf("gkeemu: trigger before %s: %v", api, err)
		}
	}
	s.opTriggers = kept
}

// startClusterOperation is StartClusterOperation with s.mu held.
func (s *Server) startClusterOperation(cluster, opType string, d time.Duration) (string, error) {
	cs := s.clusters[cluster]
	if cs == nil {
		return "", fmt.Errorf("gkeemu: no cluster %s", cluster)
	}
	if opType == "" {
		opType = OpUpgradeMaster
	}
	now := s.opts.Now()
	s.advance(now)
	req := &request{now: now}
	saved := s.opts.PendingDuration
	savedRun := s.opts.RunningDuration
	s.opts.PendingDuration, s.opts.RunningDuration = -1, d
	op := s.startOperation(req, cs, opType, req.link(cs.project, cs.location, "clusters/"+cs.short), false, nil, nil)
	s.opts.PendingDuration, s.opts.RunningDuration = saved, savedRun
	return op.Name, nil
}

// Operations returns every operation so far, oldest first, as GET would.
func (s *Server) Operations() []*container.Operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	s.advance(now)
	out := make([]*container.Operation, 0, len(s.ops))
	for _, o := range s.ops {
		out = append(out, cloneBase(s.operationView(o, now), s.linkBase()))
	}
	return out
}

// linkBase is the base URL of links in values handed out outside a
// request (the inspection methods).
func (s *Server) linkBase() string { return s.baseURL(nil) }
