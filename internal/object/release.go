package object

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// ReleasedFieldManager is the field manager that keeps the fields
// ReleaseFields hands over until their new owner writes them.
func ReleasedFieldManager(fieldManager string) string { return fieldManager + "-released" }

// ReleaseFields prepares the provider to stop setting the fields at paths
// (e.g. {"spec", "replicas"}) without the server deleting them.
//
// Server-side apply removes a field its manager set before and no longer
// sets, unless another manager also owns it. So when a resource hands a
// field to someone else (spec.replicas to an autoscaler), simply leaving it
// out of the next apply would reset it to its default. Instead, each of
// the fields the provider's field manager owns on live is applied once
// more, at its live value, by a second field manager
// (ReleasedFieldManager). That manager then co-owns the field, so the
// provider's next apply can leave it out and the value stays until its new
// owner changes it (which also ends the co-ownership). This is the
// hand-over the Kubernetes server-side apply documentation describes.
//
// Fields the provider does not own are left alone, and nothing is sent
// when there are none: the cost is one apply, once, at the hand-over.
func (k Kind) ReleaseFields(ctx context.Context, meta *conn.Meta, live *unstructured.Unstructured, paths ...[]string) diag.Diagnostics {
	var diags diag.Diagnostics
	partial, released, err := releasePatch(k, live, meta.FieldManager(), paths)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot hand over fields of %s", k.Ref(live.GetNamespace(), live.GetName())), err.Error())
		return diags
	}
	if len(released) == 0 {
		return diags
	}
	c, d := meta.Kube(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	manager := ReleasedFieldManager(meta.FieldManager())
	ref := k.Ref(live.GetNamespace(), live.GetName())
	tflog.Info(ctx, "handing fields over before the provider stops setting them", map[string]any{
		"object": ref.String(), "fields": strings.Join(released, ", "), "field_manager": manager,
	})
	// No force: the values are the live ones, so nobody's differ.
	if _, err := c.Apply(ctx, k.GVR, partial, kube.ApplyOptions{FieldManager: manager}); err != nil {
		diags.Append(k.diagnose(ctx, c, err, "apply", ref)...)
	}
	return diags
}

// releasePatch builds the partial object ReleaseFields applies: identity
// plus each field of paths that manager owns on live, at its live value.
// released lists those fields as managed-field paths (".spec.replicas").
func releasePatch(k Kind, live *unstructured.Unstructured, manager string, paths [][]string) (partial *unstructured.Unstructured, released []string, err error) {
	owned, err := kube.OwnedFields(live, manager)
	if err != nil {
		return nil, nil, err
	}
	partial = k.New()
	partial.SetName(live.GetName())
	partial.SetNamespace(live.GetNamespace())
	for _, p := range paths {
		name := "." + strings.Join(p, ".")
		if !slices.Contains(owned, name) {
			continue
		}
		v, found, err := unstructured.NestedFieldCopy(live.Object, p...)
		if err != nil || !found {
			continue
		}
		if err := unstructured.SetNestedField(partial.Object, v, p...); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		released = append(released, name)
	}
	return partial, released, nil
}
