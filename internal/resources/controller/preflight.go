package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// The installer never half-applies what it could have refused: before the
// first write, preflight checks every object of the manifest that can be
// checked, and reports every problem at once:
//
//   - its kind is served by the cluster, or defined by a CRD of the manifest;
//   - a namespaced object has a namespace that exists or that the manifest
//     creates;
//   - the API server accepts it: a server-side dry run (nothing persisted),
//     so a document the server would reject (a number where the schema wants
//     a string, an invalid field) is refused before anything is written.
//
// What depends on the manifest itself (objects of a kind its CRDs define,
// objects in a namespace it creates) cannot be dry-run before that CRD or
// namespace exists. An object of a kind the cluster serves, in a namespace
// the manifest creates, is checked against the OpenAPI schema the cluster
// publishes for its kind instead (kube.Client.SchemaCheck: the typed
// conversion the server makes of an apply) before the first write. Then
// all of them are dry-run by a second preflight right after the first stage
// (namespaces and CRDs) and before any other write; if that second
// preflight refuses anything, what the first stage created is deleted
// again (rollbackCreated), so a refused manifest leaves nothing behind.

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// preflight dry-runs every object of objs it can, and returns the objects
// it had to defer (see above). created says which CRD-defined kinds and
// which namespaces the manifest creates.
func (in *installer) preflight(ctx context.Context, objs []object) (deferred []object, diags diag.Diagnostics) {
	crdKinds, namespaces := definedByManifest(objs)
	nsExists := map[string]bool{}
	var problems []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if crdKinds[gvk.GroupKind()] {
			// Checked against the manifest's CRD, not whatever version of
			// it the cluster has now.
			deferred = append(deferred, o)
			continue
		}
		m, d := in.mapping(ctx, o)
		if d.HasError() {
			for _, e := range d.Errors() {
				problems = append(problems, e.Detail())
			}
			continue
		}
		if ns := o.GetNamespace(); m.Namespaced && ns != "" {
			exists, ok := nsExists[ns]
			if !ok {
				_, err := in.c.Get(ctx, namespaceGVR, "", ns)
				switch {
				case err == nil:
					exists = true
				case kube.IsNotFound(err):
				default:
					diags.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: namespaceGVR, Kind: "Namespace", Name: ns})...)
					return nil, diags
				}
				nsExists[ns] = exists
			}
			if !exists {
				if namespaces[ns] {
					// Not dry-runnable before its namespace exists, but
					// its shape can be checked against the schema the
					// cluster publishes for its kind, so that a document
					// the server would refuse is found before the
					// namespace is written.
					if p := schemaProblem(in.c, o, "as its namespace does not exist yet"); p != "" {
						problems = append(problems, p)
						continue
					}
					deferred = append(deferred, o)
					continue
				}
				problems = append(problems, fmt.Sprintf("%s: %s %q is in namespace %q, which does not exist, and the manifest "+
					"does not create it. Create the namespace first or add it to the manifest.", o.where(), o.GetKind(), o.GetName(), ns))
				continue
			}
		}
		if isCRD(o.Unstructured) {
			// An existing CRD may need prepareCRD (versions dropped from
			// storedVersions) before the server accepts it; only a new one
			// can be dry-run as is.
			_, err := in.c.Get(ctx, m.GVR, "", o.GetName())
			if err == nil {
				continue
			}
			if !kube.IsNotFound(err) {
				diags.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: m.GVR, Kind: o.GetKind(), Name: o.GetName()})...)
				return nil, diags
			}
		}
		if workloadKinds[gvk.GroupKind().String()] {
			// A workload whose selector differs is replaced, not
			// updated (takeover.go): the dry run of an update would
			// be refused, so its shape is checked against the schema.
			live, err := in.c.Get(ctx, m.GVR, o.GetNamespace(), o.GetName())
			if err != nil && !kube.IsNotFound(err) {
				diags.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: m.GVR, Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()})...)
				return nil, diags
			}
			if err == nil && selectorChanged(live, o.Unstructured) {
				if p := schemaProblem(in.c, o, "as it replaces a "+o.GetKind()+" whose selector differs"); p != "" {
					problems = append(problems, p)
				}
				continue
			}
		}
		if p := in.dryRun(ctx, o, m); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		in.dry = nil
		diags.AddError(fmt.Sprintf("The manifest cannot be installed: %d problem(s) found before anything was written", len(problems)),
			strings.Join(problems, "\n\n")+"\n\nNothing was written to the cluster: every object was checked (kinds served, "+
				"namespaces, and a server-side dry run) before the first write.")
	}
	tflog.Debug(ctx, "preflight checked the manifest", map[string]any{"objects": len(objs), "deferred": len(deferred), "problems": len(problems)})
	return deferred, diags
}

// preflightDeferred checks, after the first stage, the objects preflight
// had to defer. A problem found here comes after namespaces and CRDs were
// written, but before any other write.
func (in *installer) preflightDeferred(ctx context.Context, objs []object) diag.Diagnostics {
	var diags diag.Diagnostics
	var problems []string
	for _, o := range objs {
		m, d := in.mapping(ctx, o)
		if d.HasError() {
			for _, e := range d.Errors() {
				problems = append(problems, e.Detail())
			}
			continue
		}
		if p := in.dryRun(ctx, o, m); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		diags.AddError(fmt.Sprintf("The manifest cannot be installed: %d problem(s) found by the server-side dry run", len(problems)),
			strings.Join(problems, "\n\n"))
	}
	return diags
}

// dryRun asks the API server to validate o without persisting it and
// returns the problem in words, or "".
func (in *installer) dryRun(ctx context.Context, o object, m kube.Mapping) string {
	ref := kube.ObjectRef{GVR: m.GVR, Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
	dry, err := in.c.Apply(ctx, m.GVR, o.Unstructured, kube.ApplyOptions{FieldManager: in.manager, Force: true, DryRun: true})
	if err == nil {
		if in.dry == nil {
			in.dry = map[*unstructured.Unstructured]*unstructured.Unstructured{}
		}
		in.dry[o.Unstructured] = dry
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the API server rejected %s in a server-side dry run.", o.where(), ref)
	for _, d := range kube.Diagnostics(err, "apply", ref) {
		fmt.Fprintf(&b, "\n%s: %s", d.Summary(), d.Detail())
	}
	return b.String()
}

// schemaProblem checks o against the cluster's published schema of its
// kind and returns the problem in words, or "" (also when the cluster
// publishes no schema for it: the dry run after the first stage checks it).
func schemaProblem(c *kube.Client, o object, why string) string {
	err := c.SchemaCheck(o.Unstructured)
	if err == nil || errors.Is(err, kube.ErrNoSchema) {
		return ""
	}
	return fmt.Sprintf("%s: %s %q does not fit the schema the cluster publishes for %s (checked before anything "+
		"was written, %s): %v", o.where(), o.GetKind(), o.GetNamespace()+"/"+o.GetName(),
		o.GroupVersionKind().GroupVersion().WithKind(o.GetKind()), why, err)
}

// definedByManifest returns the kinds the manifest's CRDs define and the
// namespaces it creates.
func definedByManifest(objs []object) (map[schema.GroupKind]bool, map[string]bool) {
	kinds, namespaces := map[schema.GroupKind]bool{}, map[string]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		switch {
		case isCRD(o.Unstructured):
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			if group != "" && kind != "" {
				kinds[schema.GroupKind{Group: group, Kind: kind}] = true
			}
		case gvk.Group == "" && gvk.Kind == "Namespace":
			namespaces[o.GetName()] = true
		}
	}
	return kinds, namespaces
}

// appliedSoFar describes, for an error of a failed install, what was
// already written, and that running apply again is safe.
func appliedSoFar(done []inventoryEntry) string {
	if len(done) == 0 {
		return "Nothing was written to the cluster. Running apply again is safe."
	}
	names := make([]string, 0, len(done))
	for _, e := range done {
		n := e.Kind + " " + e.Name
		if e.Namespace != "" {
			n = e.Kind + " " + e.Namespace + "/" + e.Name
		}
		names = append(names, n)
	}
	return fmt.Sprintf("Already applied before the failure (%d object(s)), and kept in the Terraform state so nothing is "+
		"left untracked: %s.\n\nRunning apply again is safe: it re-applies the same objects (unchanged ones are not "+
		"rewritten) and continues with the rest.", len(done), strings.Join(names, ", "))
}
