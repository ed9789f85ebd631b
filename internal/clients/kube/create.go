package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
)

// Create-only server-side apply
//
// Server-side apply has no "create only" mode: an apply to a name that
// exists merges into that object. Checking with a GET first races with
// anyone creating the same name in between (two Terraform resources with
// the same name in one parallel apply both "created" the object, and then
// took it from each other on every apply). A precondition in the applied
// object does not help either: the API server refuses an apply whose
// metadata.uid names no existing object (patch.go in k8s.io/apiserver), and
// a resourceVersion is only a precondition on an existing object.
//
// The one atomic "create if absent" is POST: the server refuses it with
// AlreadyExists whatever the kind. But a POST records its fields under an
// Update entry of the field manager (operation Update), and fields listed
// by an Update entry are never pruned by a later apply of the same manager
// (server-side apply removes only fields no other entry lists; see
// k8s.io/client-go/util/csaupgrade, which exists for this problem). So
// Create continues with two more requests:
//
//  1. POST with the field manager: created here, or AlreadyExists;
//  2. a forced server-side apply of the same object with the same manager,
//     which records exactly the applied fields under its Apply entry;
//  3. a merge patch of metadata.managedFields, guarded by the
//     resourceVersion, that drops the manager's Update entry from step 1.
//
// Afterwards the object's ownership is exactly what an apply-created object
// has: fields the configuration later drops are removed from the object.
// Fields only the Update entry listed (server defaults) become unowned and
// stay, as they would after an apply. An interruption between steps 1 and
// 3 leaves the Update entry behind; RepairUpdateEntries, run after every
// apply of the object layer, repairs that (it costs nothing otherwise).

// maxOwnershipAttempts bounds the managedFields rewrite when the object
// changes between reading and patching it (a controller reconciling it).
const maxOwnershipAttempts = 4

// PartialCreateError says the object was created (step 1) but a later step
// failed. Object is what the server returned for the create.
type PartialCreateError struct {
	Ref    ObjectRef
	Object *unstructured.Unstructured
	Err    error
}

func (e *PartialCreateError) Error() string {
	return fmt.Sprintf("%s was created, but recording the provider as its server-side apply owner failed: %v", e.Ref, e.Err)
}

func (e *PartialCreateError) Unwrap() error { return e.Err }

// IsAlreadyExists reports whether err is the server's refusal to create an
// object that exists.
func IsAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// Create creates obj only if no object of that name exists, atomically
// (the server refuses with AlreadyExists, see IsAlreadyExists), and leaves
// it owned by opts.FieldManager exactly as a server-side apply would (see
// above). It returns the live object. With opts.DryRun it only asks the
// server to validate the creation (one request, nothing persisted).
//
// When the object was created but taking ownership failed, the error is a
// *PartialCreateError carrying the created object, so that the caller can
// record it instead of leaving it behind.
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, errors.New("create: no object")
	}
	ref := RefFor(gvr, obj)
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
		return nil, fmt.Errorf("create %s: apiVersion, kind and metadata.name must be set", ref)
	}
	manager := opts.FieldManager
	if manager == "" {
		manager = DefaultFieldManager
	}
	o := obj.DeepCopy()
	o.SetManagedFields(nil)
	o.SetResourceVersion("")
	co := metav1.CreateOptions{FieldManager: manager}
	if opts.DryRun {
		co.DryRun = []string{metav1.DryRunAll}
		return c.resource(gvr, o.GetNamespace()).Create(ctx, o, co)
	}
	created, err := c.resource(gvr, o.GetNamespace()).Create(ctx, o, co)
	if err != nil {
		return nil, err
	}
	live, err := c.Apply(ctx, gvr, obj, ApplyOptions{FieldManager: manager, Force: true})
	if err != nil {
		return nil, &PartialCreateError{Ref: ref, Object: created, Err: err}
	}
	live, err = c.dropUpdateEntry(ctx, gvr, live, manager)
	if err != nil {
		return nil, &PartialCreateError{Ref: ref, Object: created, Err: err}
	}
	return live, nil
}

// dropUpdateEntry removes manager's Update entry (main resource, not a
// subresource) from live's managedFields, when manager also has an Apply
// entry, so that its applies alone decide which fields it owns: step 3 of
// Create, where the Apply entry lists exactly the configured fields.
func (c *Client) dropUpdateEntry(ctx context.Context, gvr schema.GroupVersionResource, live *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	return c.rewriteManagedFields(ctx, gvr, live, func(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error) {
		keep, drop := splitUpdateEntry(entries, manager)
		return keep, drop, nil
	})
}

// RepairUpdateEntries finishes what an interrupted Create left: when live
// (the answer of an apply of obj) still has an Update entry of the field
// manager, the fields it lists are moved into the manager's Apply entry
// (k8s.io/client-go/util/csaupgrade) and obj is applied again, so that
// fields obj no longer sets are removed from the object as they would be
// after any apply. Without such an entry (the normal case) it sends
// nothing; otherwise it costs a merge patch of metadata.managedFields,
// guarded by the resourceVersion, and one apply.
func (c *Client) RepairUpdateEntries(ctx context.Context, gvr schema.GroupVersionResource, live, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	manager := opts.FieldManager
	if manager == "" {
		manager = DefaultFieldManager
	}
	if !hasUpdateEntry(live.GetManagedFields(), manager) {
		return live, nil
	}
	_, err := c.rewriteManagedFields(ctx, gvr, live, func(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error) {
		if !hasUpdateEntry(entries, manager) {
			return entries, false, nil
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetManagedFields(entries)
		if err := csaupgrade.UpgradeManagedFields(u, sets.New(manager), manager); err != nil {
			return nil, false, fmt.Errorf("moving the fields of the %q Update entry to its Apply entry: %w", manager, err)
		}
		return u.GetManagedFields(), true, nil
	})
	if err != nil {
		return nil, err
	}
	return c.Apply(ctx, gvr, obj, opts)
}

func hasUpdateEntry(entries []metav1.ManagedFieldsEntry, manager string) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}

// rewriteManagedFields replaces live's managedFields with what rewrite
// makes of them, by a merge patch guarded by the resourceVersion; when the
// object changed in between (409) it starts over from a fresh read, a few
// times. rewrite says whether there is anything to write at all.
func (c *Client) rewriteManagedFields(ctx context.Context, gvr schema.GroupVersionResource, live *unstructured.Unstructured,
	rewrite func([]metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error)) (*unstructured.Unstructured, error) {
	for attempt := 1; ; attempt++ {
		keep, write, err := rewrite(live.GetManagedFields())
		if err != nil {
			return nil, err
		}
		if !write {
			return live, nil
		}
		entries := make([]any, 0, len(keep))
		for _, e := range keep {
			u, err := toUnstructuredEntry(e)
			if err != nil {
				return nil, err
			}
			entries = append(entries, u)
		}
		patch := map[string]any{"metadata": map[string]any{
			"resourceVersion": live.GetResourceVersion(),
			"managedFields":   entries,
		}}
		data, err := json.Marshal(patch)
		if err != nil {
			return nil, fmt.Errorf("encoding the managed fields patch: %w", err)
		}
		// The patch changes no field, so it records no entry of its own.
		out, err := c.resource(gvr, live.GetNamespace()).Patch(ctx, live.GetName(), types.MergePatchType, data, metav1.PatchOptions{})
		switch {
		case err == nil:
			return out, nil
		case !IsConflict(err):
			return nil, err
		case attempt >= maxOwnershipAttempts:
			return nil, fmt.Errorf("the object kept changing while its managed fields were rewritten (%d attempts): %w", attempt, err)
		}
		if live, err = c.Get(ctx, gvr, live.GetNamespace(), live.GetName()); err != nil {
			return nil, err
		}
	}
}

// splitUpdateEntry returns the entries to keep, and whether manager's main
// resource Update entry is to be dropped (only when manager also applies).
func splitUpdateEntry(entries []metav1.ManagedFieldsEntry, manager string) ([]metav1.ManagedFieldsEntry, bool) {
	hasApply := false
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			hasApply = true
		}
	}
	if !hasApply {
		return entries, false
	}
	keep := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	drop := false
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			drop = true
			continue
		}
		keep = append(keep, e)
	}
	return keep, drop
}

func toUnstructuredEntry(e metav1.ManagedFieldsEntry) (map[string]any, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{e})
	list, ok, err := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	if err != nil || !ok || len(list) != 1 {
		return nil, fmt.Errorf("encoding the managed fields entry of %q: %w", e.Manager, err)
	}
	m, ok := list[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("encoding the managed fields entry of %q", e.Manager)
	}
	return m, nil
}
