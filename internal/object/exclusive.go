package object

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// Why ApplyExclusive exists
//
// A forced server-side apply takes back every field the provider sets, but
// it cannot remove a field the provider never set: an extra container, env
// variable or toleration that someone added with kubectl edit or a patch
// belongs to that other field manager, and server-side apply only prunes
// what the applying manager itself applied before. Applying the live value
// first does not help either: a field applied with the value it already
// has becomes shared, and a shared field survives the pruning as long as
// any other manager (applier or updater) still lists it. The resource's
// plan would show the extra container being removed on every run, and no
// apply would ever remove it.
//
// The one way to hand such fields to the provider is to edit
// metadata.managedFields, which the API server accepts on a patch: the
// stray paths are moved from the other managers' entries into the
// provider's Apply entry, after which a normal apply of the configured
// object prunes them, exactly as if the provider had set them earlier.

// maxExclusiveAttempts bounds the retries when the object changes between
// reading its managed fields and rewriting them (a 409 on the
// resourceVersion precondition). A controller typically answers the very
// apply that repairs drift (say, operatingMode set back to Running) with a
// burst of its own writes, each a new resourceVersion; three attempts in a
// row without a pause all lost that race on a loaded CI machine, so the
// attempts are spaced by kube.ConflictBackoff.
const maxExclusiveAttempts = 10

// ApplyExclusive server-side applies obj like Apply (with wo) and then makes sure
// that, below the given top-level fields (for example "spec"), the object
// holds nothing but what obj sets: fields added there by other field
// managers are removed. Use it for the parts of an object a resource
// declares in full, so that a plan showing an out-of-band addition as a
// diff is also repaired by the apply. Fields outside those paths (labels
// and annotations a controller adds, status) are left alone.
//
// Without such fields (the normal case) it costs the one apply request.
// With them it costs two more: a merge patch of metadata.managedFields
// (guarded by the resourceVersion) that makes the provider's field manager
// the owner of the stray fields, and a second apply that drops them.
func (k Kind) ApplyExclusive(ctx context.Context, meta *conn.Meta, obj *unstructured.Unstructured, wo WriteOptions, paths ...string) (*unstructured.Unstructured, diag.Diagnostics) {
	live, diags := k.Apply(ctx, meta, obj, wo)
	if diags.HasError() {
		return nil, diags
	}
	manager := meta.FieldManager()
	ref := k.Ref(obj.GetNamespace(), obj.GetName())
	for attempt := 1; ; attempt++ {
		stray, err := strayFields(live, manager, paths)
		if err != nil {
			diags.AddWarning(fmt.Sprintf("Cannot check %s for fields set by others", ref), err.Error())
			return live, diags
		}
		if len(stray) == 0 {
			return live, diags
		}
		if attempt > maxExclusiveAttempts {
			// An error, not a warning: returning the object with these
			// fields would contradict the plan, and Terraform would report
			// that as a provider bug instead of saying what happened.
			diags.AddError(fmt.Sprintf("Fields set by others remain on %s", ref),
				fmt.Sprintf("The configuration was applied, but these fields, added by other field managers, could not be "+
					"removed, because the object kept changing while the provider took them over (%d attempts):\n\n%s\n\n"+
					"Running terraform apply again is safe and retries the removal; if it keeps failing, find what keeps "+
					"writing the object (kubectl get --show-managed-fields).", maxExclusiveAttempts, describeStray(stray)))
			return nil, diags
		}
		tflog.Info(ctx, "removing fields other field managers added to a part of the object the configuration declares in full",
			map[string]any{"object": ref.String(), "fields": describeStray(stray)})

		entries, err := reassign(live, manager, stray)
		if err != nil {
			diags.AddError(fmt.Sprintf("Cannot take over fields of %s", ref), err.Error())
			return nil, diags
		}
		c, d := meta.Kube(ctx)
		diags.Append(d...)
		if diags.HasError() {
			return nil, diags
		}
		patch := map[string]any{"metadata": map[string]any{
			// The precondition: the rewrite is computed from this version,
			// and must not erase ownership someone recorded since.
			"resourceVersion": live.GetResourceVersion(),
			"managedFields":   entries,
		}}
		err = c.MergePatch(ctx, k.GVR, obj.GetNamespace(), obj.GetName(), patch, manager)
		if err != nil && !kube.IsConflict(err) {
			diags.Append(kube.Diagnostics(err, "patch", ref)...)
			return nil, diags
		}
		if err != nil {
			// Someone wrote the object since it was read: let the burst
			// pass before reading it again.
			if err := kube.ConflictBackoff(ctx, attempt); err != nil {
				diags.AddError(fmt.Sprintf("Cannot take over fields of %s", ref), err.Error())
				return nil, diags
			}
		}
		// After a conflict the next apply simply starts over from the
		// current object; after success it prunes the fields now ours.
		live, d = k.Apply(ctx, meta, obj, wo)
		diags.Append(d...)
		if diags.HasError() {
			return nil, diags
		}
	}
}

// strayFields finds, for each field manager other than manager, the fields
// below paths that it owns on the main resource (not on subresources such
// as status or scale) and manager does not. Fields that are ancestors of
// something manager owns are never stray: they are the structure manager's
// own fields hang from. The result maps each manager entry's index in
// obj's managedFields to its stray set.
func strayFields(obj *unstructured.Unstructured, manager string, paths []string) (map[int]*fieldpath.Set, error) {
	entries := obj.GetManagedFields()
	ours := fieldpath.NewSet()
	for _, e := range entries {
		if isOurs(e, manager) {
			s, err := entrySet(e)
			if err != nil {
				return nil, err
			}
			ours = ours.Union(s)
		}
	}
	// Every proper prefix of an owned path: the structure above our fields.
	ancestors := fieldpath.NewSet()
	for p := range ours.All() {
		for i := 1; i < len(p); i++ {
			ancestors.Insert(p[:i].Copy())
		}
	}
	roots := map[string]bool{}
	for _, p := range paths {
		roots[strings.TrimPrefix(p, ".")] = true
	}

	out := map[int]*fieldpath.Set{}
	for i, e := range entries {
		if isOurs(e, manager) || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		s, err := entrySet(e)
		if err != nil {
			return nil, err
		}
		stray := fieldpath.NewSet()
		for p := range s.All() {
			if len(p) == 0 || p[0].FieldName == nil || !roots[*p[0].FieldName] {
				continue
			}
			if ours.Has(p) || ancestors.Has(p) {
				continue
			}
			if holdsNothing(obj.Object, p) {
				// An empty object or list says nothing, so it is no drift,
				// and removing it would only fight whoever writes it: the
				// agent-sandbox claim controller's full Update at adoption
				// writes `additionalPodMetadata: {}`
				// (extensions/controllers/sandboxclaim_controller.go:1142 at
				// v0.5.6).
				continue
			}
			stray.Insert(p.Copy())
		}
		if !stray.Empty() {
			out[i] = stray
		}
	}
	return out, nil
}

// holdsNothing says whether the field at p (a path of field names) is an
// empty object or an empty list in obj. Paths through list entries are
// not looked into.
func holdsNothing(obj map[string]any, p fieldpath.Path) bool {
	var cur any = obj
	for _, pe := range p {
		if pe.FieldName == nil {
			return false
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[*pe.FieldName]; !ok {
			return false
		}
	}
	switch v := cur.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func isOurs(e metav1.ManagedFieldsEntry, manager string) bool {
	return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
}

func entrySet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := fieldpath.NewSet()
	if e.FieldsV1 == nil {
		return s, nil
	}
	if err := s.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
		return nil, fmt.Errorf("parsing the managed fields of %q: %w", e.Manager, err)
	}
	return s, nil
}

// reassign returns obj's managedFields with the stray fields moved from the
// entries that own them into manager's Apply entry. Entries left with
// nothing are dropped, as the API server itself does.
func reassign(obj *unstructured.Unstructured, manager string, stray map[int]*fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	entries := obj.GetManagedFields()
	all := fieldpath.NewSet()
	for _, s := range stray {
		all = all.Union(s)
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	took := false
	for i, e := range entries {
		s, ok := stray[i]
		switch {
		case isOurs(e, manager) && !took:
			set, err := entrySet(e)
			if err != nil {
				return nil, err
			}
			if e.FieldsV1, err = encodeFieldsV1(set.Union(all)); err != nil {
				return nil, err
			}
			took = true
		case ok:
			set, err := entrySet(e)
			if err != nil {
				return nil, err
			}
			rest := set.Difference(s)
			if rest.Empty() {
				continue
			}
			if e.FieldsV1, err = encodeFieldsV1(rest); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	if !took {
		return nil, fmt.Errorf("field manager %q has no apply entry on %s to move the fields into", manager, obj.GetName())
	}
	return out, nil
}

func encodeFieldsV1(s *fieldpath.Set) (*metav1.FieldsV1, error) {
	raw, err := s.ToJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding managed fields: %w", err)
	}
	return metav1.NewFieldsV1(string(raw)), nil
}

// describeStray lists the stray fields' leaves, sorted, one per line.
func describeStray(stray map[int]*fieldpath.Set) string {
	var lines []string
	for _, s := range stray {
		for p := range s.Leaves().All() {
			lines = append(lines, "  "+p.String())
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
