package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// rewritePageSize bounds one LIST page while migrating storage, so a large
// collection is never held in memory (or sent by the server) at once.
const rewritePageSize = 250

// RewriteAll reads every object of gvr, in all namespaces, and writes it
// back unchanged. The API server stores every write in the CRD's current
// storage version, so afterwards no object is stored in an older version;
// this is the storage migration that must precede removing a version from
// a CRD's status.storedVersions (kube-storage-version-migrator does the
// same). A write that changes nothing in etcd is skipped by the server, so
// objects already stored in the current version cost a PUT but no write.
//
// An object deleted or changed by someone else in the meantime is fine
// (the other write re-encoded it too). The first other failure stops the
// migration; typically the conversion webhook not answering while objects
// stored in an old version are read. It returns how many objects were
// rewritten.
func (c *Client) RewriteAll(ctx context.Context, gvr schema.GroupVersionResource, fieldManager string) (int, error) {
	ri := c.dynamic.Resource(gvr)
	n := 0
	opts := metav1.ListOptions{Limit: rewritePageSize}
	for {
		list, err := ri.List(ctx, opts)
		if err != nil {
			return n, fmt.Errorf("listing %s for storage migration: %w", gvr.GroupResource(), err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			_, err = c.resource(gvr, obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
			switch {
			case err == nil:
				n++
			case apierrors.IsConflict(err), apierrors.IsNotFound(err):
				// Someone else wrote or deleted it: either way it is no
				// longer stored in an old version.
			default:
				return n, fmt.Errorf("rewriting %s: %w", RefFor(gvr, obj), err)
			}
		}
		if list.GetContinue() == "" {
			return n, nil
		}
		opts.Continue = list.GetContinue()
	}
}

// MergePatch sends a JSON merge patch (RFC 7386) to one object, or to its
// subresource (e.g. "status") when given. Unlike a server-side apply it can
// remove fields that another field manager owns, which is what it is for:
// use it sparingly, for the few transitions that apply cannot express.
func (c *Client) MergePatch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, patch any, fieldManager string, subresource ...string) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encoding merge patch: %w", err)
	}
	_, err = c.resource(gvr, namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}, subresource...)
	return err
}

// SetStoredVersions replaces a CRD's status.storedVersions. The API server
// only accepts versions that the CRD still lists and requires the storage
// version among them. Call it only after RewriteAll, or objects still
// stored in a dropped version become unreadable once the version goes.
func (c *Client) SetStoredVersions(ctx context.Context, crdName string, versions []string, fieldManager string) error {
	if len(versions) == 0 {
		return errors.New("storedVersions can not be empty")
	}
	return c.MergePatch(ctx, CRDGVR, "", crdName,
		map[string]any{"status": map[string]any{"storedVersions": versions}}, fieldManager, "status")
}
