package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// TakeOverFields makes manager the owner of every field that the managers
// from selects own in live's main resource (not its subresources, such as
// status), and removes those managers' entries: their fields are united
// into manager's Apply entry of the same API version (created when it has
// none). The next apply by manager then removes the fields it no longer
// sets, as if manager had set them itself, which is what taking over an
// installation made by another tool needs: server-side apply never removes
// a field another manager still owns (a Helm label, kubectl's
// last-applied-configuration annotation, a Service selector key of another
// chart), so without this they would stay forever.
//
// It is k8s.io/client-go/util/csaupgrade's transformation, widened to
// entries of either operation (Helm v4 and `kubectl apply --server-side`
// apply; Helm v3 and client-side kubectl update). Entries of another API
// version than live's are left alone: their field sets are written in that
// version's schema. It returns the object after the rewrite (live itself
// when there was nothing to move) and the names of the managers whose
// fields it took. The rewrite is one merge patch of metadata.managedFields,
// guarded by the resourceVersion; the object's fields are not changed.
func (c *Client) TakeOverFields(ctx context.Context, gvr schema.GroupVersionResource, live *unstructured.Unstructured, manager string, from func(metav1.ManagedFieldsEntry) bool) (*unstructured.Unstructured, []string, error) {
	var taken []string
	out, err := c.rewriteManagedFields(ctx, gvr, live, func(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error) {
		var moved []string
		kept, err := takeOverEntries(entries, live.GetAPIVersion(), manager, from, &moved)
		taken = moved
		return kept, len(moved) > 0, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("taking over the fields of %v on %s: %w", taken, live.GetName(), err)
	}
	return out, taken, nil
}

// takeOverEntries is TakeOverFields' rewrite of the entries; moved receives
// the managers whose fields it took.
func takeOverEntries(entries []metav1.ManagedFieldsEntry, apiVersion, manager string, from func(metav1.ManagedFieldsEntry) bool, moved *[]string) ([]metav1.ManagedFieldsEntry, error) {
	union := &fieldpath.Set{}
	target := -1
	var kept []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Subresource == "" && e.APIVersion == apiVersion {
			if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply {
				target = len(kept)
			} else if e.Manager != manager && from(e) {
				if e.FieldsV1 != nil {
					s := &fieldpath.Set{}
					if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
						return nil, fmt.Errorf("parsing the managed fields of %q: %w", e.Manager, err)
					}
					union = union.Union(s)
				}
				*moved = append(*moved, e.Manager)
				continue
			}
		}
		kept = append(kept, e)
	}
	if len(*moved) == 0 {
		return entries, nil
	}
	if target < 0 {
		kept = append([]metav1.ManagedFieldsEntry{{
			Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: apiVersion, FieldsType: "FieldsV1", Time: ptrNow(),
		}}, kept...)
		target = 0
	}
	if raw := kept[target].FieldsV1; raw != nil {
		s := &fieldpath.Set{}
		if err := s.FromJSON(raw.GetRawReader()); err != nil {
			return nil, fmt.Errorf("parsing the managed fields of %q: %w", manager, err)
		}
		union = union.Union(s)
	}
	data, err := union.ToJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the managed fields of %q: %w", manager, err)
	}
	kept[target].FieldsV1 = metav1.NewFieldsV1(string(data))
	kept[target].FieldsType = "FieldsV1"
	return kept, nil
}

func ptrNow() *metav1.Time {
	t := metav1.Now()
	return &t
}
