package object

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// Plan-time lookups (issue 13 item 7). A reference the API server does not
// check when the object is written (a pod's RuntimeClass) only shows at
// apply, or never: the write succeeds and no pod is ever created. So, when
// the cluster can be read while planning, the plan looks the referenced
// object up: one GET per distinct object per provider process (cached
// here, with its answer), read-only. Every doubt says nothing: the cluster
// is not reachable or not configured yet, the kind is not served yet,
// reading is forbidden, or the reference is unknown (another resource's
// attribute computed at apply). Only a clear 404 is reported, and always
// as an error.
//
// Only references that nothing in the configuration could create before
// the write are looked up. A plan cannot see the other resources of the
// configuration, and a reference to another resource's name is known
// while planning, so a namespace, template or warm pool created in the
// same apply (the quickstart shape) looks exactly like a typo; warning
// about those was noise in the normal case, and the apply already fails
// fast and clearly when one is really missing (the server's namespace
// error, the warm pool's pre-write template check, the claim's
// WarmPoolNotFound). The same holds for the default "gvisor" RuntimeClass,
// which GKE creates with the first GKE Sandbox node pool, possibly in the
// same apply.

// lookupTimeout bounds each plan-time GET.
const lookupTimeout = 10 * time.Second

// RuntimeClassGVR is node.k8s.io/v1 RuntimeClass.
var RuntimeClassGVR = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}

// Presence is what a plan-time lookup found.
type Presence int

const (
	// PresenceUnknown: not looked up, or the answer was not a clear yes or
	// no (cluster unreachable, kind not served, forbidden).
	PresenceUnknown Presence = iota
	// PresenceFound: the object exists.
	PresenceFound
	// PresenceAbsent: the server said 404 for the object.
	PresenceAbsent
)

// Plan-time reads are cached per client and key for the life of the
// provider process (planReadKey -> planReadResult): a plan of many
// resources naming the same namespace or RuntimeClass, or checking against
// the same CRD schema or controller configuration, reads it once. And
// unreachable remembers the clients whose cluster did not answer at all
// (*kube.Client -> error), shared by every plan-time read: an unreachable
// cluster costs one timeout per provider process, not one per read.
var (
	planReads   sync.Map
	unreachable sync.Map
)

type planReadKey struct {
	c   *kube.Client
	key any
}

type planReadResult struct {
	value any
	why   string
}

// PlanRead returns what read returns for key (comparable; say what is
// read, e.g. a struct of the kind and name), reading the cluster at most
// once per provider process and client, within lookupTimeout. why is
// empty when read answered; otherwise it says why there is no answer (the
// provider is not configured, the client cannot be built, the cluster did
// not answer this or an earlier plan-time read, or read's error), and the
// value is read's (the zero value when read did not run).
//
// read returns an error only when it has no answer; an error that is not
// the API server's (a timeout, a refused connection) marks the cluster
// unreachable for every later plan-time read of the process.
func PlanRead[T any](ctx context.Context, meta *conn.Meta, key any, read func(ctx context.Context, c *kube.Client) (T, error)) (value T, why string) {
	if meta == nil {
		return value, "provider not configured"
	}
	c, d := meta.Kube(ctx)
	if d.HasError() {
		return value, "no Kubernetes client: " + d.Errors()[0].Summary()
	}
	if err, down := unreachable.Load(c); down {
		return value, fmt.Sprintf("the cluster did not answer an earlier plan-time read: %v", err)
	}
	k := planReadKey{c: c, key: key}
	if r, ok := planReads.Load(k); ok {
		res := r.(planReadResult) //nolint:forcetypeassert // only planReadResult is stored
		v, _ := res.value.(T)
		return v, res.why
	}
	rctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	value, err := read(rctx, c)
	res := planReadResult{value: value}
	if err != nil {
		res.why = err.Error()
		var st apierrors.APIStatus
		if !errors.As(err, &st) && !kube.IsResourceNotServed(err) {
			// No answer at all: do not wait again for this cluster.
			unreachable.Store(c, err)
		}
	}
	planReads.Store(k, res)
	return value, res.why
}

type lookupKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// Lookup says whether the object gvr namespace/name exists, reading it at
// most once per provider process (PlanRead). namespace is "" for
// cluster-scoped kinds.
func Lookup(ctx context.Context, meta *conn.Meta, gvr schema.GroupVersionResource, namespace, name string) Presence {
	if name == "" {
		return PresenceUnknown
	}
	p, why := PlanRead(ctx, meta, lookupKey{gvr: gvr, namespace: namespace, name: name},
		func(ctx context.Context, c *kube.Client) (Presence, error) {
			_, err := c.Get(ctx, gvr, namespace, name)
			var st apierrors.APIStatus
			switch {
			case err == nil:
				return PresenceFound, nil
			case kube.IsResourceNotServed(err):
				// The CRD is not installed (yet): nothing to say.
				return PresenceUnknown, nil
			case apierrors.IsNotFound(err):
				return PresenceAbsent, nil
			case errors.As(err, &st):
				// Forbidden, throttled, a server error: the server
				// answered, but not about the object.
				return PresenceUnknown, nil
			}
			return PresenceUnknown, err
		})
	tflog.Debug(ctx, "plan-time lookup", map[string]any{
		"resource": gvr.Resource, "namespace": namespace, "name": name, "presence": int(p), "no answer": why,
	})
	return p
}

// Reference is an attribute naming an object that must exist.
type Reference struct {
	// Attr is the attribute's path, named in the diagnostic.
	Attr path.Path
	// Value is the attribute's planned value; null, unknown or "" is
	// skipped.
	Value types.String
	// Prior is the value in state (null on create): an unchanged reference
	// is not looked up again.
	Prior types.String
	// GVR and Namespace say where the object is ("" for cluster-scoped).
	GVR       schema.GroupVersionResource
	Namespace string
	// The error's summary and detail when the object is absent.
	Summary string
	Detail  string
}

// CheckReferences looks up each changed, known reference and reports the
// absent ones as errors at their attribute. It never writes and never
// fails a plan for a cluster that cannot be read.
func CheckReferences(ctx context.Context, meta *conn.Meta, refs ...Reference) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, r := range refs {
		if r.Value.IsNull() || r.Value.IsUnknown() || r.Value.ValueString() == "" {
			continue
		}
		if !r.Prior.IsNull() && !r.Prior.IsUnknown() && r.Prior.Equal(r.Value) {
			continue
		}
		if Lookup(ctx, meta, r.GVR, r.Namespace, r.Value.ValueString()) != PresenceAbsent {
			continue
		}
		diags.AddAttributeError(r.Attr, r.Summary, r.Detail)
	}
	return diags
}
