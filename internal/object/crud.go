package object

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
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
	ResourceType string // e.g. "agentsandbox_sandbox_template", for messages
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
	live, err := c.Create(ctx, k.GVR, obj, kube.ApplyOptions{FieldManager: meta.FieldManager(), Force: true})
	var partial *kube.PartialCreateError
	switch {
	case err == nil:
		return live, diags
	case kube.IsAlreadyExists(err):
		if owner := k.controllerOf(ctx, meta, ref); owner != "" {
			diags.AddError(fmt.Sprintf("%s already exists, created by a controller", ref),
				fmt.Sprintf("The cluster already has %s, and it is controlled by %s, which creates it and rewrites it: "+
					"importing it would make Terraform and that controller overwrite each other. Choose another name.%s",
					ref, owner, ownedHint(owner)))
			return nil, diags
		}
		diags.AddError(fmt.Sprintf("%s already exists", ref),
			fmt.Sprintf("The cluster already has %s, so creating it would take over an object this configuration "+
				"does not manage (another resource, configuration or person created it). Import it instead:\n\n"+
				"  terraform import %s.<name> %s\n\nor choose another name.",
				ref, k.ResourceType, ID(ref.Namespace, ref.Name)))
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
func (k Kind) controllerOf(ctx context.Context, meta *conn.Meta, ref kube.ObjectRef) string {
	live, found, diags := k.Read(ctx, meta, ref.Namespace, ref.Name)
	if diags.HasError() || !found {
		return ""
	}
	for _, o := range live.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return fmt.Sprintf("%s %s", o.Kind, ID(ref.Namespace, o.Name))
		}
	}
	return ""
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
