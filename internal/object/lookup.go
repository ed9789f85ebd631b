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
// check when the object is written (a pod's RuntimeClass, a claim's
// template or warm pool, a pool's template) only shows at apply, or never:
// the write succeeds and the controller creates nothing. So, when the
// cluster can be read while planning, the plan looks the referenced object
// up: one GET per distinct object per provider process (cached here, with
// its answer), read-only. Every doubt says nothing: the cluster is not
// reachable or not configured yet, the kind is not served yet (the
// controller may be installed in the same apply), reading is forbidden, or
// the reference is unknown (another resource's attribute computed at
// apply). Only a clear 404 is reported.
//
// What is an error and what a warning is the caller's choice through
// Severity: a plan cannot see the other resources of the configuration, so
// an object that another resource may create in the same apply is a
// warning; one that nothing would create before this resource is written
// is an error.

// lookupTimeout bounds each plan-time GET.
const lookupTimeout = 10 * time.Second

var (
	// NamespaceGVR is core/v1 Namespace.
	NamespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	// RuntimeClassGVR is node.k8s.io/v1 RuntimeClass.
	RuntimeClassGVR = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}
)

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

type lookupKey struct {
	c         *kube.Client
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// lookups caches every answer (lookupKey -> Presence) and unreachable the
// clients whose cluster did not answer (*kube.Client -> error), for the
// life of the provider process: a plan of many resources naming the same
// namespace or RuntimeClass sends one GET, and an unreachable cluster
// costs one timeout, not one per reference.
var (
	lookups     sync.Map
	unreachable sync.Map
)

// Lookup says whether the object gvr namespace/name exists, reading it at
// most once per provider process. namespace is "" for cluster-scoped kinds.
func Lookup(ctx context.Context, meta *conn.Meta, gvr schema.GroupVersionResource, namespace, name string) Presence {
	if meta == nil || name == "" {
		return PresenceUnknown
	}
	c, d := meta.Kube(ctx)
	if d.HasError() {
		tflog.Debug(ctx, "plan-time lookup skipped: no Kubernetes client", map[string]any{"reason": d.Errors()[0].Summary()})
		return PresenceUnknown
	}
	if _, down := unreachable.Load(c); down {
		return PresenceUnknown
	}
	key := lookupKey{c: c, gvr: gvr, namespace: namespace, name: name}
	if v, ok := lookups.Load(key); ok {
		return v.(Presence) //nolint:forcetypeassert // only Presence is stored
	}
	rctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	_, err := c.Get(rctx, gvr, namespace, name)
	p := PresenceUnknown
	var st apierrors.APIStatus
	switch {
	case err == nil:
		p = PresenceFound
	case kube.IsResourceNotServed(err):
		// The CRD is not installed (yet): nothing to say.
	case apierrors.IsNotFound(err):
		p = PresenceAbsent
	case errors.As(err, &st):
		// Forbidden, throttled, a server error: the server answered, but
		// not about the object.
	default:
		// No answer at all: do not wait again for this cluster.
		unreachable.Store(c, err)
	}
	tflog.Debug(ctx, "plan-time lookup", map[string]any{
		"resource": gvr.Resource, "namespace": namespace, "name": name, "presence": int(p), "error": fmt.Sprint(err),
	})
	lookups.Store(key, p)
	return p
}

// Severity of a reference found missing at plan.
type Severity int

const (
	// Warn: another resource may create the object in the same apply.
	Warn Severity = iota
	// Fail: nothing would create it before this resource is written.
	Fail
)

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
	// Severity when absent, and the diagnostic's summary and detail.
	Severity Severity
	Summary  string
	Detail   string
}

// CheckReferences looks up each changed, known reference and reports the
// absent ones at their attribute. It never writes and never fails a plan
// for a cluster that cannot be read.
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
		if r.Severity == Fail {
			diags.AddAttributeError(r.Attr, r.Summary, r.Detail)
		} else {
			diags.AddAttributeWarning(r.Attr, r.Summary, r.Detail)
		}
	}
	return diags
}

// NamespaceReference is the namespace attribute of a namespaced resource,
// checked on create (a change of namespace replaces the object, so it is a
// create too). Absent is a warning: the namespace is often created in the
// same apply by another provider (hashicorp/kubernetes'
// kubernetes_namespace), whose name is known at plan. The write then fails
// at apply with the server's "namespace not found" if it is still missing.
func NamespaceReference(kind string, value, prior types.String) Reference {
	ns := value.ValueString()
	return Reference{
		Attr: path.Root("namespace"), Value: value, Prior: prior, GVR: NamespaceGVR, Severity: Warn,
		Summary: "Namespace not found",
		Detail: fmt.Sprintf("There is no namespace %q in the cluster, so the %s cannot be created there. If another "+
			"resource of this configuration creates it (for example a kubernetes_namespace), make this resource depend on it "+
			"(namespace = kubernetes_namespace.<name>.metadata[0].name) and ignore this warning; otherwise create the "+
			"namespace (kubectl create namespace %s) or correct namespace.", ns, kind, ns),
	}
}

// CheckNamespacedReference is the plan-time check of a namespaced resource
// that names another object in its namespace: on create, the namespace
// (NamespaceReference; when it is absent nothing can be in it, so ref is
// not looked up), then ref itself, built for the namespace once it is known.
func CheckNamespacedReference(ctx context.Context, meta *conn.Meta, kind string, namespace types.String, creating bool,
	ref func(namespace string) Reference) diag.Diagnostics {
	var refs []Reference
	if creating {
		refs = append(refs, NamespaceReference(kind, namespace, types.StringNull()))
		if Lookup(ctx, meta, NamespaceGVR, "", namespace.ValueString()) == PresenceAbsent {
			return CheckReferences(ctx, meta, refs...)
		}
	}
	if !namespace.IsUnknown() {
		refs = append(refs, ref(namespace.ValueString()))
	}
	return CheckReferences(ctx, meta, refs...)
}
