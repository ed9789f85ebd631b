package object

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
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

// Apply server-side applies obj (create or update).
func (k Kind) Apply(ctx context.Context, meta *conn.Meta, obj *unstructured.Unstructured) (*unstructured.Unstructured, diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return nil, diags
	}
	opts := kube.ApplyOptions{FieldManager: meta.FieldManager(), Force: true}
	out, err := c.Apply(ctx, k.GVR, obj, opts)
	if err == nil {
		// Free when there is nothing to repair; otherwise it finishes a
		// create that was interrupted after its POST (see kube.Create).
		out, err = c.RepairUpdateEntries(ctx, k.GVR, out, obj, opts)
	}
	if err != nil {
		diags.Append(k.diagnose(ctx, c, err, "apply", k.Ref(obj.GetNamespace(), obj.GetName()))...)
		return nil, diags
	}
	return out, diags
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
	obj, err := c.Get(ctx, k.GVR, namespace, name)
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
	if err := c.WaitForDeletion(ctx, ref); err != nil {
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
