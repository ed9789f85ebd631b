package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Drift states of an inventory entry after a refresh.
const (
	driftNone    = ""
	driftDeleted = "deleted"
	driftChanged = "changed"
)

// inventoryEntry is one object the resource applied, as kept in state.
type inventoryEntry struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Digest is kube.ManagedDigest of the object right after it was applied:
	// what the provider's field manager owns, with the values it holds.
	// Empty when unknown (planned).
	Digest string
	// Drift is set by a refresh that found the object deleted or changed
	// outside Terraform; the next apply repairs it and clears it.
	Drift string
}

func (e inventoryEntry) gvk() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(e.APIVersion, e.Kind)
}

func (e inventoryEntry) key() objectKey {
	return objectKey{Group: e.gvk().Group, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}
}

func (e inventoryEntry) String() string { return e.key().String() }

func (e inventoryEntry) isCRD() bool {
	return e.gvk().Group == "apiextensions.k8s.io" && e.Kind == "CustomResourceDefinition"
}

// entryFor starts the inventory entry of an object to apply.
func entryFor(o object) inventoryEntry {
	return inventoryEntry{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
}

// removedEntries returns the entries of prior whose objects are not in
// next, in deletion order: what an upgrade prunes.
func removedEntries(prior, next []inventoryEntry) []inventoryEntry {
	keep := make(map[objectKey]bool, len(next))
	for _, e := range next {
		keep[e.key()] = true
	}
	var out []inventoryEntry
	for _, e := range prior {
		if !keep[e.key()] {
			out = append(out, e)
		}
	}
	sortForDelete(out)
	return out
}

// mergeInventories is prior with next laid over it (next's entries win),
// in apply order: the state to keep after a partly failed update, so a
// later apply still knows about every object that may exist.
func mergeInventories(prior, next []inventoryEntry) []inventoryEntry {
	index := map[objectKey]int{}
	var out []inventoryEntry
	for _, list := range [][]inventoryEntry{prior, next} {
		for _, e := range list {
			if i, ok := index[e.key()]; ok {
				out[i] = e
				continue
			}
			index[e.key()] = len(out)
			out = append(out, e)
		}
	}
	sortForApplyEntries(out)
	return out
}

// driftSummary lists the drifted entries for messages, e.g.
// `Deployment.apps "agent-sandbox-system/agent-sandbox-controller" (deleted)`.
func driftSummary(entries []inventoryEntry) []string {
	var out []string
	for _, e := range entries {
		if e.Drift != driftNone {
			out = append(out, fmt.Sprintf("%s (%s)", e, e.Drift))
		}
	}
	return out
}

// bundleEntries are the inventory entries (without digests) of objs.
func bundleEntries(objs []object) []inventoryEntry {
	out := make([]inventoryEntry, 0, len(objs))
	for _, o := range objs {
		out = append(out, entryFor(o))
	}
	return out
}
