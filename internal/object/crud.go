package object

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
)

// Kind identifies the object type a resource manages.
type Kind struct {
	GVR          schema.GroupVersionResource
	Kind         string // e.g. "SandboxTemplate"
	ResourceType string // e.g. "agentsandbox_sandbox_template": the type of the resource and data source of the kind, also named in messages
}

// Ref names one object of this kind.
func (k Kind) Ref(namespace, name string) kube.ObjectRef {
	return kube.ObjectRef{GVR: k.GVR, Kind: k.Kind, Namespace: namespace, Name: name}
}

// New returns an empty object of this kind with apiVersion and kind set.
func (k Kind) New() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(k.GVR.GroupVersion().String())
	u.SetKind(k.Kind)
	return u
}

// Decode reads a live object of kind k into its API type T. The CRD's
// schema guarantees the shape; an error means a server that does not hold to
// it, and names the object.
func Decode[T any](k Kind, live *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", k.Ref(live.GetNamespace(), live.GetName()), err)
	}
	return out, nil
}

// Create writes obj, refusing to take over an object that already exists:
// silently adopting it would let two configurations (or a configuration and
// a person) own the same object. The refusal says how to import it. When
// the object was created but a later step of the create failed, it returns
// the created object with the error, for the caller to save.
//
// Writes are server-side applies with the provider's field manager and
// force: Terraform is the declared owner of the fields it sets, so a field
// changed out of band by another manager is taken back (drift repaired)
// rather than failing with a conflict.
func (k Kind) Create(ctx context.Context, meta *conn.Meta, obj *unstructured.Unstructured) (*unstructured.Unstructured, diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return nil, diags
	}
	ref := k.Ref(obj.GetNamespace(), obj.GetName())
	// Atomic: the server refuses the create when the object exists, so two
	// resources naming one object (in one parallel apply, or in two
	// configurations) can never both create it (kube.Client.Create).
	creation := creates.begin(meta, k.GVR, ref)
	live, err := c.Create(ctx, k.GVR, obj, kube.ApplyOptions{FieldManager: meta.FieldManager(), Force: true})
	var partial *kube.PartialCreateError
	if err != nil && !errors.As(err, &partial) {
		creation.abandon()
	}
	switch {
	case err == nil:
		return live, diags
	case kube.IsAlreadyExists(err):
		diags.Append(k.alreadyExists(ctx, meta, ref, creation.others())...)
		return nil, diags
	case errors.As(err, &partial):
		// The object is this create's own (the create was atomic): hand it
		// back with the error, so that it is saved in the state (tainted)
		// rather than left behind for an import.
		diags.AddError(fmt.Sprintf("%s was created, but the provider could not finish taking ownership", ref),
			fmt.Sprintf("%v\n\nThe object was created by this apply (the create was atomic, so no other resource "+
				"made it) and is saved in the Terraform state, marked tainted: the next apply replaces it. %s",
				err, kube.RerunIsSafe))
		return partial.Object, diags
	}
	diags.Append(k.diagnose(ctx, c, err, "create", ref)...)
	return nil, diags
}

// WriteOptions tune Kind.Apply.
type WriteOptions struct {
	// ForceConflicts takes over fields another server-side applier owns
	// (the resource's force_conflicts).
	ForceConflicts bool
}

// Apply server-side applies obj (create or update).
//
// Fields another field manager owns are handled by how it came to own
// them. One that changed them with an ordinary write (kubectl edit or
// patch, a controller's update) declared nothing: that is drift, and the
// apply takes the fields back. One that set them with a server-side apply
// of its own (another Terraform configuration, kubectl apply
// --server-side, a GitOps tool) declared that it owns them: taking them
// silently would make two owners overwrite each other on every run, so the
// apply fails naming each field and its manager, and writes nothing,
// unless opts.ForceConflicts. The first apply is sent without force, so
// this costs a second request only when there is a conflict.
func (k Kind) Apply(ctx context.Context, meta *conn.Meta, obj *unstructured.Unstructured, opts ...WriteOptions) (*unstructured.Unstructured, diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return nil, diags
	}
	var wo WriteOptions
	for _, o := range opts {
		wo.ForceConflicts = wo.ForceConflicts || o.ForceConflicts
	}
	ref := k.Ref(obj.GetNamespace(), obj.GetName())
	ao := kube.ApplyOptions{FieldManager: meta.FieldManager()}
	out, err := c.Apply(ctx, k.GVR, obj, ao)
	if conflicts := kube.FieldConflicts(err); len(conflicts) > 0 {
		var declared []kube.FieldConflict
		for _, fc := range conflicts {
			if fc.Applied {
				declared = append(declared, fc)
			}
		}
		if len(declared) > 0 && !wo.ForceConflicts {
			diags.AddError(fmt.Sprintf("%s: field owned by another field manager", ref), conflictDetail(k, ref, declared))
			return nil, diags
		}
		tflog.Info(ctx, "taking over fields other field managers changed", map[string]any{
			"object": ref.String(), "fields": describeConflicts(conflicts),
		})
		ao.Force = true
		out, err = c.Apply(ctx, k.GVR, obj, ao)
	}
	opts2 := kube.ApplyOptions{FieldManager: meta.FieldManager(), Force: true}
	if err == nil {
		// Free when there is nothing to repair; otherwise it finishes a
		// create that was interrupted after its POST (see kube.Create).
		out, err = c.RepairUpdateEntries(ctx, k.GVR, out, obj, opts2)
	}
	if err != nil {
		diags.Append(k.diagnose(ctx, c, err, "apply", ref)...)
		return nil, diags
	}
	return out, diags
}

// conflictDetail says which fields others own by server-side apply, and
// the two ways out.
func conflictDetail(k Kind, ref kube.ObjectRef, declared []kube.FieldConflict) string {
	return fmt.Sprintf("Request: apply (server-side) %s (API %s, resource %s), without force.\n\n"+
		"These fields are set by this configuration, and another tool owns them through a server-side apply of its own "+
		"(another Terraform configuration, kubectl apply --server-side, a GitOps tool):\n%s\n\n"+
		"Nothing was written. Taking the fields silently would make the two owners overwrite each other on every run. "+
		"Either remove these fields from this configuration (or from the other tool's), or set force_conflicts = true "+
		"on this %s to make Terraform their owner; the other tool's next apply then conflicts in turn, unless it forces too.",
		ref, ref.GVR.GroupVersion().String(), ref.GVR.Resource, describeConflicts(declared), k.ResourceType)
}

func describeConflicts(cs []kube.FieldConflict) string {
	lines := make([]string, len(cs))
	for i, c := range cs {
		how := "server-side apply"
		if !c.Applied {
			how = "an ordinary write"
		}
		lines[i] = fmt.Sprintf("  - %s is owned by field manager %q (%s)", c.Field, c.Manager, how)
	}
	return strings.Join(lines, "\n")
}

// Read returns the live object, or found=false when it (or its whole kind)
// is gone, in which case the caller removes the resource from state so the
// next plan recreates it.
//
// "The kind is gone" is checked, not assumed: when the resource is not
// served, one discovery of its group tells a removed CRD (found=false: its
// objects went with it) from a cluster that serves the group only at other
// versions, such as an older GKE add-on serving only v1alpha1. There the
// objects may well exist, so Read fails with what was found and what is
// required instead of dropping them from the state.
func (k Kind) Read(ctx context.Context, meta *conn.Meta, namespace, name string) (obj *unstructured.Unstructured, found bool, diags diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return nil, false, diags
	}
	ref := k.Ref(namespace, name)
	// Within a ReadResource that goes through package fastpath: the
	// object its GET already fetched (a changed object costs one GET),
	// and what this read saw, for the read marker.
	slot := fastpath.ReadSlotFrom(ctx)
	key := k.objectKey(namespace, name)
	if got, found, ok := slot.Take(key); ok {
		u, isObj := got.(*unstructured.Unstructured)
		if !found || isObj {
			slot.Saw(seenOf(key, u, found))
			return u, found, diags
		}
	}
	obj, err := c.Get(ctx, k.GVR, namespace, name)
	if err == nil {
		slot.Saw(seenOf(key, obj, true))
	} else if kube.IsNotFound(err) && !kube.IsResourceNotServed(err) {
		slot.Saw(seenOf(key, nil, false))
	}
	if kube.IsResourceNotServed(err) {
		n := k.checkServed(ctx, c)
		if n.group.Err != nil || n.otherVersionsOnly() {
			diags.Append(n.diagnostics("get", ref, err)...)
		}
		return nil, false, diags
	}
	if kube.IsNotFound(err) {
		return nil, false, diags
	}
	if err != nil {
		diags.Append(kube.Diagnostics(err, "get", ref)...)
		return nil, false, diags
	}
	return obj, true, diags
}

// Delete deletes the object and waits, bounded by ctx, until it is gone, so
// that a replacement or a dependent deletion never races with it. An object
// already gone is success.
//
// A kind that is not served is judged as Read judges it: with its CRD
// removed, its objects went with it (success); on a cluster serving the
// group only at other versions (v1alpha1 on an older GKE add-on) the object
// may well still exist, so the deletion fails with what was found and what
// is required instead of reporting a destroy that did nothing.
func (k Kind) Delete(ctx context.Context, meta *conn.Meta, namespace, name string, opts kube.DeleteOptions) diag.Diagnostics {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return diags
	}
	ref := k.Ref(namespace, name)
	res, err := c.DeleteObject(ctx, k.GVR, namespace, name, opts)
	if kube.IsResourceNotServed(err) {
		n := k.checkServed(ctx, c)
		if n.group.Err != nil || n.otherVersionsOnly() {
			diags.Append(n.diagnostics("delete", ref, err)...)
		}
		return diags
	}
	if err != nil {
		diags.Append(k.diagnose(ctx, c, err, "delete", ref)...)
		return diags
	}
	if !res.Existed || res.Gone {
		return diags
	}
	// The watch confirming it is shared by every deletion of the same
	// resource and namespace in flight (one WATCH for a whole destroy, not
	// one per object).
	if err := c.WaitDeleted(ctx, ref, nil); err != nil {
		diags.Append(kube.Diagnostics(err, "wait", ref)...)
	}
	return diags
}

// controllerOf names the controller owner of the existing object ref
// ("SandboxTemplate agents/python"), or "" when it has none or cannot be
// read. One GET, only after a create was refused.
// alreadyExists is the refusal of a create whose object exists. The advice
// depends on who has the object:
//   - a controller (an owner reference with controller=true): importing it
//     would make Terraform and the controller overwrite each other;
//   - another resource of this configuration, created in this apply
//     (sameApply: this provider process created it): two resources declare
//     one object, and importing it into the second would make them flip it
//     between their settings on every apply, so the advice is to keep one,
//     never to import;
//   - this provider otherwise (its field manager wrote the object): another
//     resource manages it (in this configuration or another state), or an
//     earlier apply of this resource created it and was killed before
//     Terraform saved its state. The provider cannot see states, so the
//     advice says how to tell the two apart and what to do in each: keep
//     one resource, or import it only when no state has it;
//   - anyone else (kubectl, a person, another tool): import it, or choose
//     another name.
//
// Terraform does not tell a provider the resource's address, so the import
// command names it TYPE.NAME and says where the address is shown.
func (k Kind) alreadyExists(ctx context.Context, meta *conn.Meta, ref kube.ObjectRef, sameApply bool) diag.Diagnostics {
	var diags diag.Diagnostics
	importCmd := fmt.Sprintf("  terraform import %s.NAME %s\n\nwhere %s.NAME is this resource's address (the \"with\" line "+
		"under this error shows it)", k.ResourceType, ID(ref.Namespace, ref.Name), k.ResourceType)
	if sameApply {
		diags.AddError(fmt.Sprintf("%s already exists: two resources of this configuration declare it", ref),
			fmt.Sprintf("Another %s resource of this configuration created %s a moment ago, in this apply. "+
				"Two resources declaring one object would overwrite each other's settings on every apply, so this "+
				"one was not created and must not be imported either. Keep one of the two resource blocks (search "+
				"the configuration for the name: grep -rn '%q' --include='*.tf' .), or give this one another name.",
				k.ResourceType, ref, ref.Name))
		return diags
	}
	live, found, _ := k.Read(ctx, meta, ref.Namespace, ref.Name)
	if found {
		for _, o := range live.GetOwnerReferences() {
			if o.Controller != nil && *o.Controller {
				owner := fmt.Sprintf("%s %s", o.Kind, ID(ref.Namespace, o.Name))
				diags.AddError(fmt.Sprintf("%s already exists, created by a controller", ref),
					fmt.Sprintf("The cluster already has %s, and it is controlled by %s, which creates it and rewrites it: "+
						"importing it would make Terraform and that controller overwrite each other. Choose another name.%s",
						ref, owner, ownedHint(owner)))
				return diags
			}
		}
		if written, ok := writtenBy(live, meta.FieldManager()); ok {
			diags.AddError(fmt.Sprintf("%s already exists, written by this provider", ref),
				fmt.Sprintf("The cluster already has %s, written by this provider (field manager %q%s). Either "+
					"another %s resource manages it, in this configuration or in another Terraform state that uses "+
					"this cluster, or an earlier apply of this resource created it and was stopped before Terraform "+
					"saved its state. Look for it in each state that uses this cluster:\n\n"+
					"  terraform state list | grep %s\n\n"+
					"and in the configurations (grep -rn '%q' --include='*.tf' .).\n\n"+
					"If a resource has it: keep that one and remove this one, or give this one another name. Do not "+
					"import it here as well: two resources managing one object overwrite each other's settings on "+
					"every apply.\n\n"+
					"Only if no state has it (the interrupted apply), bring it back under this resource:\n\n%s.",
					ref, meta.FieldManager(), written, k.ResourceType, k.ResourceType, ref.Name, importCmd))
			return diags
		}
	}
	diags.AddError(fmt.Sprintf("%s already exists", ref),
		fmt.Sprintf("The cluster already has %s, so creating it would take over an object no resource of this "+
			"provider wrote (kubectl, a person or another tool created it). To manage it with this resource, "+
			"import it instead:\n\n%s; or choose another name.", ref, importCmd))
	return diags
}

// creates tracks the creates this provider process has under way or has
// made, per provider configuration (one process serves one Terraform
// operation), so that a create refused because the object exists can tell
// whether another resource of the same apply created it.
var creates = &createLog{m: map[createKey]int{}}

type createKey struct {
	meta *conn.Meta
	gvr  schema.GroupVersionResource
	ref  string
}

type createLog struct {
	mu sync.Mutex
	m  map[createKey]int
}

// createHandle is one create's entry in the log.
type createHandle struct {
	log *createLog
	key createKey
}

// begin records a create of ref, before it is sent.
func (l *createLog) begin(meta *conn.Meta, gvr schema.GroupVersionResource, ref kube.ObjectRef) createHandle {
	key := createKey{meta: meta, gvr: gvr, ref: ref.Namespace + "/" + ref.Name}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[key]++
	return createHandle{log: l, key: key}
}

// abandon removes a create that made nothing.
func (h createHandle) abandon() {
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	if h.log.m[h.key]--; h.log.m[h.key] <= 0 {
		delete(h.log.m, h.key)
	}
}

// others reports whether another create of the same object in this process
// is under way or has succeeded (the handle's own has been abandoned).
func (h createHandle) others() bool {
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	return h.log.m[h.key] > 0
}

// writtenBy reports whether fieldManager has written obj (an entry of its
// managed fields: the server-side apply of a create or an update, or, for a
// moment during a create, the create itself; kube.Client.Create), and when
// it last did (", last at <time>", or "").
func writtenBy(obj *unstructured.Unstructured, fieldManager string) (string, bool) {
	var last *metav1.Time
	found := false
	for _, e := range obj.GetManagedFields() {
		if e.Manager != fieldManager {
			continue
		}
		found = true
		if e.Time != nil && (last == nil || last.Before(e.Time)) {
			last = e.Time
		}
	}
	if found && last != nil {
		return ", last at " + last.UTC().Format(time.RFC3339), true
	}
	return "", found
}

// ownedHint says what to do when the owner is a SandboxTemplate: the
// object is then the template's managed NetworkPolicy.
func ownedHint(owner string) string {
	if !strings.HasPrefix(owner, "SandboxTemplate ") {
		return ""
	}
	return " It is the NetworkPolicy the agent-sandbox controller manages for that template " +
		"(network_policy_management = \"Managed\", the default). To enforce this policy instead, set the template's " +
		"network_policy_management = \"Unmanaged\" (the controller then deletes its policy) and give this one " +
		"another name; or keep the managed policy and set the template's network_policy rules."
}

func (k Kind) objectKey(namespace, name string) fastpath.ObjectKey {
	return fastpath.ObjectKey{Group: k.GVR.Group, Version: k.GVR.Version, Resource: k.GVR.Resource, Namespace: namespace, Name: name}
}

func seenOf(key fastpath.ObjectKey, obj *unstructured.Unstructured, found bool) fastpath.Seen {
	s := fastpath.Seen{Key: key, Found: found && obj != nil}
	if s.Found {
		s.UID, s.ResourceVersion = string(obj.GetUID()), obj.GetResourceVersion()
	}
	return s
}

// fastGet is the GET of Kind.Read for package fastpath: ok is false for
// any failure but the object's own 404.
func (k Kind) fastGet(ctx context.Context, meta *conn.Meta, key fastpath.ObjectKey) (fastpath.Seen, any, bool) {
	if meta == nil || key != k.objectKey(key.Namespace, key.Name) {
		return fastpath.Seen{}, nil, false
	}
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return fastpath.Seen{}, nil, false
	}
	obj, err := c.Get(ctx, k.GVR, key.Namespace, key.Name)
	switch {
	case err == nil:
		return seenOf(key, obj, true), obj, true
	case kube.IsNotFound(err) && !kube.IsResourceNotServed(err):
		return seenOf(key, nil, false), nil, true
	}
	return fastpath.Seen{}, nil, false
}
