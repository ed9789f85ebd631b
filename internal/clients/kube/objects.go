package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// DefaultFieldManager is the server-side apply field manager used when
// ApplyOptions does not name one; it matches the provider's default.
const DefaultFieldManager = "agentsandbox"

// ObjectRef names one object for errors, diagnostics and waits.
type ObjectRef struct {
	GVR schema.GroupVersionResource
	// Kind is optional (e.g. "Sandbox"); without it messages use the resource name.
	Kind      string
	Namespace string // empty for cluster-scoped objects
	Name      string
}

// RefFor names obj, which is addressed through gvr.
func RefFor(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) ObjectRef {
	return ObjectRef{GVR: gvr, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String renders the reference as people read it: `Sandbox "team-a/agent-1"`.
func (r ObjectRef) String() string {
	what := r.Kind
	if what == "" {
		what = r.GVR.Resource
		if r.GVR.Group != "" {
			what += "." + r.GVR.Group
		}
	}
	switch {
	case r.Name == "":
		if r.Namespace != "" {
			return fmt.Sprintf("%s in namespace %q", what, r.Namespace)
		}
		return what
	case r.Namespace == "":
		return fmt.Sprintf("%s %q", what, r.Name)
	default:
		return fmt.Sprintf("%s %q", what, r.Namespace+"/"+r.Name)
	}
}

// ApplyOptions tunes a server-side apply.
type ApplyOptions struct {
	// FieldManager owns the applied fields; empty means DefaultFieldManager.
	FieldManager string
	// Force takes ownership of fields another manager owns instead of
	// failing with a conflict.
	Force bool
	// DryRun asks the server to compute the result without persisting it
	// (for drift detection and plan-time validation).
	DryRun bool
}

func (c *Client) resource(gvr schema.GroupVersionResource, namespace string) dynamic.ResourceInterface {
	if namespace == "" {
		return c.dynamic.Resource(gvr)
	}
	return c.dynamic.Resource(gvr).Namespace(namespace)
}

// Apply server-side applies obj (application/apply-patch+yaml): the fields
// in obj become owned by the field manager, fields it owned before and no
// longer sets are removed, and fields of other managers are left alone. The
// object is namespaced when obj has a namespace and cluster-scoped when it
// has none, so obj must carry apiVersion, kind, name and (for namespaced
// kinds) namespace. It returns the object as the server stored it (or would
// have, with DryRun).
func (c *Client) Apply(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, errors.New("apply: no object")
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
		return nil, fmt.Errorf("apply %s: apiVersion, kind and metadata.name must be set", RefFor(gvr, obj))
	}
	o := obj.DeepCopy()
	// The server rejects an apply that carries managedFields; an object read
	// back and applied again would.
	o.SetManagedFields(nil)
	ao := metav1.ApplyOptions{FieldManager: opts.FieldManager, Force: opts.Force}
	if ao.FieldManager == "" {
		ao.FieldManager = DefaultFieldManager
	}
	if opts.DryRun {
		ao.DryRun = []string{metav1.DryRunAll}
	}
	return c.resource(gvr, o.GetNamespace()).Apply(ctx, o.GetName(), o, ao)
}

// Get reads one object. Use IsNotFound on the error to tell "gone" apart.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return c.resource(gvr, namespace).Get(ctx, name, metav1.GetOptions{})
}

// List reads the objects of gvr in namespace (all namespaces when empty)
// matching labelSelector (everything when empty).
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, namespace, labelSelector string) (*unstructured.UnstructuredList, error) {
	return c.resource(gvr, namespace).List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
}

// DeleteOptions tunes a delete.
type DeleteOptions struct {
	// Propagation is how dependents are deleted: metav1.DeletePropagationForeground
	// (the object stays, with a deletionTimestamp, until its dependents are
	// gone), Background (the default for most kinds) or Orphan. Empty means
	// the server's default for the kind.
	Propagation metav1.DeletionPropagation
	DryRun      bool
}

// Delete asks the server to delete an object. existed is false, with no
// error, when the object was already gone: Terraform's Delete treats that
// as success. A kind the server does not serve is an error
// (IsResourceNotServed): the object may exist at a version the server does
// serve, and only the caller can judge (see object.Kind.Delete). Deletion
// may complete later (finalizers, foreground propagation); use
// WaitForDeletion to wait for it.
func (c *Client) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts DeleteOptions) (existed bool, err error) {
	r, err := c.DeleteObject(ctx, gvr, namespace, name, opts)
	return r.Existed, err
}

// DeleteResult says what a delete request found and did.
type DeleteResult struct {
	// Existed is false when the object was already gone.
	Existed bool
	// Gone is true when the server removed the object within the request
	// (no finalizer and no graceful period held it back): no wait is needed.
	// False when the object existed and its deletion is pending, or when the
	// response cannot tell (a Client built by NewClientFromDynamic).
	Gone bool
}

// DeleteObject is Delete, and also reports whether the deletion already
// completed, so that a caller can skip waiting for it. The API server
// answers a DELETE with a Status "Success" or with the object as it was
// removed when it deleted at once, and with the object carrying a
// deletionTimestamp when finalizers (foreground propagation, a controller's
// own) or a grace period keep it for now (apiserver
// pkg/registry/generic/registry/store.go, Delete). Waiting on objects
// already gone cost one extra list per object on every destroy.
func (c *Client) DeleteObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts DeleteOptions) (DeleteResult, error) {
	do := metav1.DeleteOptions{}
	if opts.Propagation != "" {
		p := opts.Propagation
		do.PropagationPolicy = &p
	}
	if opts.DryRun {
		do.DryRun = []string{metav1.DryRunAll}
	}
	var (
		res DeleteResult
		err error
	)
	if c.raw == nil {
		err = c.resource(gvr, namespace).Delete(ctx, name, do)
	} else {
		var body []byte
		body, err = c.deleteRaw(ctx, gvr, namespace, name, do)
		res.Gone = err == nil && !opts.DryRun && deletedAtOnce(body)
	}
	if apierrors.IsNotFound(err) && !IsResourceNotServed(err) {
		return DeleteResult{}, nil
	}
	if err != nil {
		return DeleteResult{}, err
	}
	res.Existed = true
	return res, nil
}

func (c *Client) deleteRaw(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, do metav1.DeleteOptions) ([]byte, error) {
	body, err := json.Marshal(do)
	if err != nil {
		return nil, err
	}
	segs := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		segs = []string{"/api", gvr.Version}
	}
	if namespace != "" {
		segs = append(segs, "namespaces", namespace)
	}
	segs = append(segs, gvr.Resource, name)
	res := c.raw.Delete().AbsPath(segs...).SetHeader("Content-Type", "application/json").Body(body).Do(ctx)
	// Raw's error is the unstructured one; Error decodes the Status the
	// server sent (NotFound with its details, Conflict, ...).
	out, _ := res.Raw()
	return out, res.Error()
}

// deletedAtOnce reads a DELETE response: a Status, or an object without a
// deletionTimestamp, means the object is gone already.
func deletedAtOnce(body []byte) bool {
	var resp struct {
		Kind     string `json:"kind"`
		Status   string `json:"status"`
		Metadata struct {
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return false
	}
	if resp.Kind == "Status" {
		return resp.Status == metav1.StatusSuccess
	}
	return resp.Kind != "" && resp.Metadata.DeletionTimestamp == nil
}

// OwnedFields lists the leaf fields that manager owns through server-side
// apply in obj's managedFields, as paths like ".spec.replicas" or
// `.spec.podTemplate.spec.containers[name="main"].image`, sorted. Read
// uses them to compare only what the provider manages with the live object.
func OwnedFields(obj *unstructured.Unstructured, manager string) ([]string, error) {
	set := &fieldpath.Set{}
	for _, e := range obj.GetManagedFields() {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.FieldsV1 == nil {
			continue
		}
		// Subresource entries (status) are owned separately; the provider
		// applies the main resource.
		if e.Subresource != "" {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("parsing the managed fields of %q: %w", manager, err)
		}
		set = set.Union(s)
	}
	var out []string
	set.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	sort.Strings(out)
	return out, nil
}
