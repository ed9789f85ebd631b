package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ManagedDigest fingerprints what manager owns in obj: the SHA-256 (hex) of
// every leaf field manager owns through server-side apply, with the value
// the object holds there, skipping the fields for which ignore (may be nil)
// returns true. ignore receives paths as OwnedFields renders them, e.g.
// ".spec.conversion.webhook.clientConfig.caBundle".
//
// It is how a resource that applies whole objects detects drift with one
// GET per object and without storing the objects: compute the digest from
// the object the apply returned, store it, and compare it with the digest
// of the object read later. The digest changes when someone else changes a
// field the manager set (a write by another manager moves the field's
// ownership away, so the owned set itself changes), removes it, or deletes
// and recreates the object; it does not change when others add or change
// fields the manager never set (a controller's caBundle, server defaults,
// status), which is exactly the difference between drift and noise.
// Because the values come from the server both times, server-side
// normalisation (quantities, defaults inside owned structures) never looks
// like drift.
func ManagedDigest(obj *unstructured.Unstructured, manager string, ignore func(path string) bool) (string, error) {
	set, err := appliedFieldSet(obj, manager)
	if err != nil {
		return "", err
	}
	var lines []string
	for p := range set.Leaves().All() {
		key := p.String()
		if ignore != nil && ignore(key) {
			continue
		}
		v, found := lookupPath(obj.Object, p)
		if !found {
			// Owned but absent: an explicit null the server kept, or an
			// entry out of step with the object. Still part of the
			// fingerprint, and distinct from any value.
			lines = append(lines, key+" (absent)")
			continue
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("encoding %s of %s: %w", key, obj.GetName(), err)
		}
		lines = append(lines, key+"="+string(enc))
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:]), nil
}

// appliedFieldSet is the union of the field sets of manager's Apply entries
// on the main resource (not on subresources such as status).
func appliedFieldSet(obj *unstructured.Unstructured, manager string) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	for _, e := range obj.GetManagedFields() {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.FieldsV1 == nil || e.Subresource != "" {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("parsing the managed fields of %q on %s: %w", manager, obj.GetName(), err)
		}
		set = set.Union(s)
	}
	return set, nil
}

// SameAppliedFields reports whether manager's Apply entries own the same
// leaf fields in a and b (e.g. the live object and the result of a dry-run
// apply), leaving out the paths ignore (may be nil) skips: when they
// differ, an apply would change ownership even if every value stays the
// same.
func SameAppliedFields(a, b *unstructured.Unstructured, manager string, ignore func(path string) bool) (bool, error) {
	pa, err := appliedLeaves(a, manager, ignore)
	if err != nil {
		return false, err
	}
	pb, err := appliedLeaves(b, manager, ignore)
	if err != nil {
		return false, err
	}
	return slices.Equal(pa, pb), nil
}

func appliedLeaves(obj *unstructured.Unstructured, manager string, ignore func(string) bool) ([]string, error) {
	set, err := appliedFieldSet(obj, manager)
	if err != nil {
		return nil, err
	}
	var out []string
	for p := range set.Leaves().All() {
		if s := p.String(); ignore == nil || !ignore(s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

// lookupPath finds the value at a managed-fields path in an unstructured
// object: field names index maps, keys select the list item whose fields
// match, values select the set member, indexes select by position.
func lookupPath(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Key != nil:
			list, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, item := range list {
				m, ok := item.(map[string]any)
				if !ok || !keyMatches(m, *pe.Key) {
					continue
				}
				cur, found = m, true
				break
			}
			if !found {
				return nil, false
			}
		case pe.Value != nil:
			list, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, item := range list {
				if value.Equals(value.NewValueInterface(item), *pe.Value) {
					cur, found = item, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case pe.Index != nil:
			list, ok := cur.([]any)
			if !ok || *pe.Index < 0 || *pe.Index >= len(list) {
				return nil, false
			}
			cur = list[*pe.Index]
		default:
			return nil, false
		}
	}
	return cur, true
}

func keyMatches(item map[string]any, key value.FieldList) bool {
	for _, f := range key {
		v, ok := item[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}
