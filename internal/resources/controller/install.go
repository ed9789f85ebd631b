package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// installer applies, prunes and deletes a bundle of objects through the
// provider's one Kubernetes client, with one field manager.
type installer struct {
	c        *kube.Client
	manager  string
	wait     bool
	keepCRDs bool
	// dry holds preflight's dry-run results, so that applyOne does not ask
	// the server the same question twice.
	dry map[*unstructured.Unstructured]*unstructured.Unstructured
	// taken records what was taken over from another tool (takeover.go).
	taken takeover
}

// clientConfigPath is where a conversion webhook's address and CA live in
// a CRD. Upstream's v0.5 controller writes the caBundle (and rewrites the
// service) there at run time; the installer never treats differences
// there as drift and never takes those fields back, or it would fight the
// controller on every apply.
const clientConfigPath = ".spec.conversion.webhook.clientConfig"

// ignoreFor returns the managed-field paths to leave out of digests and
// comparisons for an object of this kind (nil: none).
func ignoreFor(group, kind string) func(string) bool {
	if group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition" {
		return func(p string) bool { return strings.HasPrefix(p, clientConfigPath) }
	}
	return nil
}

// install applies objs (sorted for apply) in stages, prunes what prior
// lists but objs no longer contain, and removes the known leftovers of an
// upgrade across v1.0. It returns the inventory of the objects applied so
// far, in apply order, even when it fails half-way, so the caller can keep
// track of everything that may exist.
func (in *installer) install(ctx context.Context, objs []object, prior []inventoryEntry, priorVersion, version, namespace string) ([]inventoryEntry, diag.Diagnostics) {
	var diags diag.Diagnostics
	var done []inventoryEntry
	// created are the entries of done this install created (not found
	// before it wrote them).
	created := map[inventoryEntry]bool{}
	started := time.Now()

	deferred, d := in.preflight(ctx, objs)
	if diags.Append(d...); diags.HasError() {
		return nil, diags
	}
	// Every error from here on says what was already written.
	failed := func(d diag.Diagnostics) ([]inventoryEntry, diag.Diagnostics) {
		var out diag.Diagnostics
		for _, x := range d {
			if x.Severity() == diag.SeverityError {
				out.AddError(x.Summary(), x.Detail()+"\n\n"+appliedSoFar(done))
				continue
			}
			out = append(out, x)
		}
		return done, out
	}

	// The controller reads its ConfigMap only when it starts: one the
	// bundle no longer has is deleted before the Deployment is rolled, or
	// the new pod would start with it (see sandboxconfig.go).
	var early []inventoryEntry
	for _, e := range removedEntries(prior, bundleEntries(objs)) {
		if isSandboxConfig(e) {
			early = append(early, e)
		}
	}

	for _, st := range []stage{stageDefinitions, stageConfig, stageWorkloads} {
		if st == stageConfig && len(deferred) > 0 {
			if d := in.preflightDeferred(ctx, deferred); d.HasError() {
				// Nothing of the manifest but its namespaces and CRDs was
				// written: those this install created go again, so a
				// refused manifest leaves nothing behind.
				var note string
				var rb diag.Diagnostics
				done, note, rb = in.rollbackCreated(ctx, done, created)
				if note == "" || len(done) > 0 || rb.HasError() {
					return failed(append(append(diags, d...), rb...))
				}
				for _, x := range d {
					if x.Severity() == diag.SeverityError {
						diags.AddError(x.Summary(), x.Detail()+"\n\n"+note+" Running apply again is safe.")
						continue
					}
					diags = append(diags, x)
				}
				return nil, diags
			}
		}
		if st == stageWorkloads && len(early) > 0 {
			if d := in.prune(ctx, early); d.HasError() {
				return failed(append(diags, d...))
			}
		}
		var await []kube.ObjectRef
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			if stageOf(gvk.Group, gvk.Kind) != st {
				continue
			}
			m, d := in.mapping(ctx, o)
			diags.Append(d...)
			if diags.HasError() {
				return failed(diags)
			}
			if isCRD(o.Unstructured) {
				diags.Append(in.prepareCRD(ctx, o)...)
				if diags.HasError() {
					return failed(diags)
				}
			}
			entry, ref, isNew, d := in.applyOne(ctx, o, m)
			diags.Append(d...)
			if diags.HasError() {
				return failed(diags)
			}
			done = append(done, entry)
			if isNew {
				created[entry] = true
			}
			if awaited(st, gvk, in.wait) {
				await = append(await, ref)
			}
		}
		if len(await) > 0 {
			tflog.Info(ctx, "waiting for "+st.String(), map[string]any{"objects": len(await)})
			if err := in.c.WaitForAll(ctx, await, kube.ObjectReady); err != nil {
				diags.Append(kube.Diagnostics(err, "wait", await[0])...)
				return failed(diags)
			}
		}
		tflog.Debug(ctx, "stage applied", map[string]any{"stage": st.String(), "elapsed_ms": time.Since(started).Milliseconds()})
	}

	removed := removedEntries(prior, done)
	removed = slices.DeleteFunc(removed, func(e inventoryEntry) bool { return slices.Contains(early, e) })
	diags.Append(in.prune(ctx, removed)...)
	if diags.HasError() {
		return failed(diags)
	}
	if crossesV1(priorVersion, version) && !servesConversionWebhook(objs) {
		// What the prune just deleted needs no second request.
		diags.Append(in.removeWebhookLeftovers(ctx, namespace, slices.Concat(done, removed))...)
	}
	diags.Append(in.taken.diagnostics()...)
	tflog.Info(ctx, "agent-sandbox controller bundle applied", map[string]any{
		"version": version, "objects": len(done), "elapsed_ms": time.Since(started).Milliseconds(),
	})
	return done, diags
}

// awaited says whether the installer waits for an object of gvk after its
// stage: namespaces and CRDs always (the next stages need them), workloads
// when the resource's `wait` is on.
func awaited(st stage, gvk schema.GroupVersionKind, wait bool) bool {
	switch st {
	case stageDefinitions:
		return true
	case stageWorkloads:
		if !wait || gvk.Group != "apps" {
			return false
		}
		return gvk.Kind == "Deployment" || gvk.Kind == "StatefulSet" || gvk.Kind == "DaemonSet"
	}
	return false
}

// mapping resolves an object's resource, refusing a custom kind whose CRD
// is neither installed nor part of the manifest.
func (in *installer) mapping(ctx context.Context, o object) (kube.Mapping, diag.Diagnostics) {
	var diags diag.Diagnostics
	m, err := in.c.MappingFor(ctx, o.GroupVersionKind())
	if err != nil {
		if kube.IsResourceNotServed(err) {
			diags.AddError("Kind not served by the cluster",
				fmt.Sprintf("%s: the cluster does not serve %s %s, and no CRD in the manifest defines it. "+
					"Install its CRD first or remove the object from the manifest.", o.where(), o.GetAPIVersion(), o.GetKind()))
			return m, diags
		}
		diags.Append(kube.Diagnostics(err, "get", kube.ObjectRef{Kind: o.GetKind(), Name: o.GetName()})...)
		return m, diags
	}
	switch {
	case m.Namespaced && o.GetNamespace() == "":
		diags.AddError("Object without a namespace",
			fmt.Sprintf("%s: %s %q is namespaced but has no metadata.namespace; the installer does not guess namespaces.",
				o.where(), o.GetKind(), o.GetName()))
	case !m.Namespaced && o.GetNamespace() != "":
		// Cluster-scoped: the namespace means nothing (kubectl ignores it).
		o.SetNamespace("")
	}
	return m, diags
}

// applyOne applies one object unless a dry run shows the apply would change
// nothing, and returns its inventory entry with the digest of what the
// field manager now owns; isNew says it created the object (it did not
// exist before).
func (in *installer) applyOne(ctx context.Context, o object, m kube.Mapping) (_ inventoryEntry, _ kube.ObjectRef, isNew bool, _ diag.Diagnostics) {
	var diags diag.Diagnostics
	gvk := o.GroupVersionKind()
	ref := kube.ObjectRef{GVR: m.GVR, Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
	entry := entryFor(o)
	ignore := ignoreFor(gvk.Group, gvk.Kind)
	opts := kube.ApplyOptions{FieldManager: in.manager, Force: true}

	live, err := in.c.Get(ctx, m.GVR, ref.Namespace, ref.Name)
	switch {
	case err == nil:
	case kube.IsNotFound(err) && !kube.IsResourceNotServed(err):
		live = nil
	default:
		diags.Append(kube.Diagnostics(err, "get", ref)...)
		return entry, ref, false, diags
	}

	var out *unstructured.Unstructured
	action := "created"
	if live != nil && selectorChanged(live, o.Unstructured) {
		in.taken.note(ref, live, nil)
		out, d := in.replaceObject(ctx, o, m, ref, live)
		if diags.Append(d...); diags.HasError() {
			return entry, ref, false, diags
		}
		return in.finish(ctx, entry, ref, out, "replaced", ignore, false)
	}
	if live != nil {
		taken := false
		if slices.ContainsFunc(live.GetManagedFields(), installedByAnotherTool) {
			before := live
			var managers []string
			live, managers, err = in.c.TakeOverFields(ctx, m.GVR, live, in.manager, installedByAnotherTool)
			if err != nil {
				diags.Append(kube.Diagnostics(err, "patch", ref)...)
				return entry, ref, false, diags
			}
			in.taken.note(ref, before, managers)
			taken = len(managers) > 0
			if taken {
				tflog.Info(ctx, "took over the fields of another installer", map[string]any{"object": ref.String(), "managers": managers})
			}
		}
		dry, cached := in.dry[o.Unstructured]
		if !cached || taken || isCRD(o.Unstructured) {
			// A CRD may have been changed by prepareCRD since preflight.
			dryOpts := opts
			dryOpts.DryRun = true
			dry, err = in.c.Apply(ctx, m.GVR, o.Unstructured, dryOpts)
			if err != nil {
				diags.Append(applyDiagnostics(err, ref, o)...)
				return entry, ref, false, diags
			}
		}
		same, err := unchanged(live, dry, in.manager, ignore)
		if err != nil {
			diags.AddError("Cannot compare "+ref.String(), err.Error())
			return entry, ref, false, diags
		}
		if same {
			out, action = live, "unchanged"
		} else {
			action = "configured"
		}
	}
	switch {
	case out != nil:
	case live == nil:
		// Created atomically: if someone else creates the same object
		// between the read above and this request, the server refuses
		// instead of both "creating" it (kube.Client.Create).
		out, err = in.c.Create(ctx, m.GVR, o.Unstructured, opts)
		var partial *kube.PartialCreateError
		switch {
		case kube.IsAlreadyExists(err):
			diags.AddError(ref.String()+" appeared during this install",
				fmt.Sprintf("%s did not exist when this install read it a moment ago, and exists now: something else "+
					"(a second agentsandbox_controller, kubectl or Helm) is installing the same objects at the same time. "+
					"Run one installer at a time. The object comes from %s.", ref, o.where()))
			return entry, ref, false, diags
		case errors.As(err, &partial):
			// Created: track it even though taking ownership failed, so
			// it is pruned or deleted with the rest.
			diags.AddError("Cannot finish creating "+ref.String(), partial.Error()+"\n\nThe object comes from "+o.where()+".")
			return entry, ref, true, diags
		case err != nil:
			diags.Append(applyDiagnostics(err, ref, o)...)
			return entry, ref, false, diags
		}
	default:
		out, err = in.c.Apply(ctx, m.GVR, o.Unstructured, opts)
		if err != nil {
			diags.Append(applyDiagnostics(err, ref, o)...)
			return entry, ref, false, diags
		}
	}
	return in.finish(ctx, entry, ref, out, action, ignore, live == nil)
}

// finish completes applyOne: the entry's digest of what the field manager
// now owns in out.
func (in *installer) finish(ctx context.Context, entry inventoryEntry, ref kube.ObjectRef, out *unstructured.Unstructured, action string, ignore func(string) bool, isNew bool) (inventoryEntry, kube.ObjectRef, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	var err error
	entry.Digest, err = kube.ManagedDigest(out, in.manager, ignore)
	if err != nil {
		diags.AddError("Cannot fingerprint "+ref.String(), err.Error())
		return entry, ref, isNew, diags
	}
	tflog.Info(ctx, "applied "+ref.String(), map[string]any{"action": action})
	return entry, ref, isNew, diags
}

// applyDiagnostics adds where the object was written to the API error.
func applyDiagnostics(err error, ref kube.ObjectRef, o object) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range kube.Diagnostics(err, "apply", ref) {
		out.AddError(d.Summary(), d.Detail()+"\n\nThe object comes from "+o.where()+".")
	}
	return out
}

// unchanged reports whether applying would change nothing: the dry-run
// result equals the live object (apart from bookkeeping and the fields
// ignore skips) and the field manager would own exactly what it owns now.
func unchanged(live, dry *unstructured.Unstructured, manager string, ignore func(string) bool) (bool, error) {
	a, b := comparableCopy(live, ignore), comparableCopy(dry, ignore)
	if !equality.Semantic.DeepEqual(a.Object, b.Object) {
		return false, nil
	}
	return kube.SameAppliedFields(live, dry, manager, ignore)
}

// comparable strips what differs between two reads of an unchanged object.
func comparableCopy(u *unstructured.Unstructured, ignore func(string) bool) *unstructured.Unstructured {
	c := u.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "generation"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(c.Object, "status")
	if ignore != nil && ignore(clientConfigPath) {
		unstructured.RemoveNestedField(c.Object, "spec", "conversion", "webhook", "clientConfig")
	}
	return c
}

// prepareCRD readies a live CRD for the version of it about to be applied,
// doing the two things server-side apply can not:
//
//  1. When the new CRD drops a version that status.storedVersions still
//     lists, the API server refuses the update (objects might still be
//     stored in that version). Every object is then rewritten so it is
//     stored in the new storage version, and only after that succeeded is
//     the dropped version removed from storedVersions. Rewriting reads
//     through the old CRD, so objects stored in the old version are
//     converted by the old controller's conversion webhook, which must
//     still answer; if it does not, nothing is changed and the error says so.
//  2. When the live CRD lists versions the new one does not, or converts
//     through a webhook the new one does not have, apply alone can not
//     remove them if another manager owns them (the controller's caBundle;
//     a version a previous kubectl or helm install wrote), so they are
//     replaced with a merge patch first.
func (in *installer) prepareCRD(ctx context.Context, o object) diag.Diagnostics {
	var diags diag.Diagnostics
	ref := kube.ObjectRef{GVR: kube.CRDGVR, Kind: "CustomResourceDefinition", Name: o.GetName()}
	live, err := in.c.Get(ctx, kube.CRDGVR, "", o.GetName())
	if kube.IsNotFound(err) {
		return diags
	}
	if err != nil {
		diags.Append(kube.Diagnostics(err, "get", ref)...)
		return diags
	}
	desired := crdVersions(o.Unstructured)
	storage := crdStorageVersion(o.Unstructured)
	stored, _, _ := unstructured.NestedStringSlice(live.Object, "status", "storedVersions")
	var drop, keep []string
	for _, v := range stored {
		if slices.Contains(desired, v) {
			keep = append(keep, v)
		} else {
			drop = append(drop, v)
		}
	}
	if len(drop) > 0 {
		if storage == "" || !crdServes(live, storage) {
			diags.AddError("Cannot migrate stored objects of "+o.GetName(),
				fmt.Sprintf("The new %s drops version(s) %s, in which objects may still be stored (status.storedVersions = %v), "+
					"but the installed CRD does not serve the new storage version %q, so the objects can not be rewritten in it. "+
					"Upgrade through a release that serves both versions first (for agent-sandbox: v0.5.x, which serves v1alpha1 "+
					"and v1beta1), then to this one.", o.GetName(), strings.Join(drop, ", "), stored, storage))
			return diags
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		gvr := schema.GroupVersionResource{Group: group, Version: storage, Resource: plural}
		n, err := in.c.RewriteAll(ctx, gvr, in.manager)
		if err != nil {
			diags.AddError("Storage migration of "+o.GetName()+" failed",
				fmt.Sprintf("Before removing version(s) %s from %s, every %s object must be rewritten so that it is stored "+
					"in %s. That failed after %d object(s): %v\n\nNothing was removed, and the CRD still serves every version. "+
					"The usual cause is the old controller's conversion webhook not answering (objects stored in an old "+
					"version are converted by it while being read): make sure the currently installed controller is "+
					"running and ready, then apply again.", strings.Join(drop, ", "), o.GetName(), plural, storage, n, err))
			return diags
		}
		if !slices.Contains(keep, storage) {
			keep = append(keep, storage)
		}
		if err := in.c.SetStoredVersions(ctx, o.GetName(), keep, in.manager); err != nil {
			diags.Append(kube.Diagnostics(err, "patch", ref)...)
			return diags
		}
		tflog.Info(ctx, "pruned CRD storedVersions after migrating stored objects", map[string]any{
			"crd": o.GetName(), "removed": drop, "stored_versions": keep, "objects_rewritten": n,
		})
	}

	spec := map[string]any{}
	for _, v := range crdVersions(live) {
		if !slices.Contains(desired, v) {
			versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
			spec["versions"] = versions
			break
		}
	}
	liveStrategy, _, _ := unstructured.NestedString(live.Object, "spec", "conversion", "strategy")
	desiredStrategy, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "strategy")
	if liveStrategy == "Webhook" && desiredStrategy != "Webhook" {
		spec["conversion"] = map[string]any{"strategy": "None", "webhook": nil}
	}
	if len(spec) == 0 {
		return diags
	}
	if err := in.c.MergePatch(ctx, kube.CRDGVR, "", o.GetName(), map[string]any{"spec": spec}, in.manager); err != nil {
		diags.Append(kube.Diagnostics(err, "patch", ref)...)
		return diags
	}
	tflog.Info(ctx, "removed CRD versions or conversion webhook the new release no longer has", map[string]any{"crd": o.GetName()})
	return diags
}

func crdVersions(u *unstructured.Unstructured) []string {
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

func crdStorageVersion(u *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			name, _ := m["name"].(string)
			return name
		}
	}
	return ""
}

func crdServes(u *unstructured.Unstructured, version string) bool {
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["name"] == version && m["served"] == true {
			return true
		}
	}
	return false
}

// servesConversionWebhook says whether any CRD of the bundle converts
// through a webhook (v0.5.x does, v1.0 does not).
func servesConversionWebhook(objs []object) bool {
	for _, o := range objs {
		if !isCRD(o.Unstructured) {
			continue
		}
		if s, _, _ := unstructured.NestedString(o.Object, "spec", "conversion", "strategy"); s == "Webhook" {
			return true
		}
	}
	return false
}

// firstV1 is the lowest version of the v1.0 line, pre-releases included.
const firstV1 = "v1.0.0-0"

// crossesV1 says whether applying version may leave v0.5's webhook objects
// behind: it is v1.0 or later (a v1.0 pre-release counts), and the previous
// version is older or unknown (a first install into a cluster a v0.5
// install may have used, or an import).
func crossesV1(prior, version string) bool {
	if semver.Compare(version, firstV1) < 0 {
		return false
	}
	return prior == "" || semver.Compare(prior, firstV1) < 0
}

// webhookLeftovers are the objects of v0.5.x's conversion webhook that v1.0
// no longer has. The Service, Role and RoleBinding are in v0.5 bundles (and
// so in an inventory that installed one, which prunes them anyway); the
// Secret is created at run time by the v0.5 controller, so no inventory
// knows it. All are named by upstream and live in the controller's
// namespace.
var webhookLeftovers = []struct {
	gvk  schema.GroupVersionKind
	name string
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "agent-sandbox-webhook-service"},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, "agent-sandbox-controller"},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, "agent-sandbox-controller"},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "agent-sandbox-webhook-certs"},
}

// removeWebhookLeftovers deletes v0.5's webhook objects from namespace,
// except those in skip: objects the new bundle itself contains, or that the
// prune already deleted.
func (in *installer) removeWebhookLeftovers(ctx context.Context, namespace string, skip []inventoryEntry) diag.Diagnostics {
	var diags diag.Diagnostics
	if namespace == "" {
		return diags
	}
	inBundle := map[objectKey]bool{}
	for _, e := range skip {
		inBundle[e.key()] = true
	}
	var gone []kube.ObjectRef
	for _, l := range webhookLeftovers {
		if inBundle[objectKey{Group: l.gvk.Group, Kind: l.gvk.Kind, Namespace: namespace, Name: l.name}] {
			continue
		}
		m, _ := kube.WellKnownMapping(l.gvk)
		ref := kube.ObjectRef{GVR: m.GVR, Kind: l.gvk.Kind, Namespace: namespace, Name: l.name}
		existed, err := in.c.Delete(ctx, m.GVR, namespace, l.name, kube.DeleteOptions{})
		if err != nil {
			diags.Append(kube.Diagnostics(err, "delete", ref)...)
			return diags
		}
		if existed {
			tflog.Info(ctx, "removed a leftover of v0.5's conversion webhook", map[string]any{"object": ref.String()})
			gone = append(gone, ref)
		}
	}
	if in.wait {
		diags.Append(in.waitGone(ctx, gone)...)
	}
	return diags
}

// rollbackCreated deletes, newest first, the entries of done this install
// created. It returns done without those it deleted, a sentence saying
// what it deleted ("" if nothing), and what it could not delete.
func (in *installer) rollbackCreated(ctx context.Context, done []inventoryEntry, created map[inventoryEntry]bool) ([]inventoryEntry, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	var deleted []string
	gone := map[inventoryEntry]bool{}
	for i := len(done) - 1; i >= 0; i-- {
		e := done[i]
		if !created[e] {
			continue
		}
		ref, _, d := in.deleteEntry(ctx, e)
		if d.HasError() {
			diags.Append(d...)
			continue
		}
		gone[e] = true
		deleted = append(deleted, ref.String())
	}
	if len(deleted) == 0 {
		return done, "", diags
	}
	tflog.Info(ctx, "rolled back what the refused install had created", map[string]any{"objects": deleted})
	note := fmt.Sprintf("The manifest was refused after its first stage (namespaces and CRDs) was written: this install "+
		"had created %s, and deleted them again, so nothing of the refused manifest is left.", strings.Join(deleted, ", "))
	return slices.DeleteFunc(done, func(e inventoryEntry) bool { return gone[e] }), note, diags
}

// prune deletes objects an earlier apply created that the bundle no longer
// contains, in deletion order. CRDs are kept when keep_crds_on_destroy is
// on: deleting a CRD deletes every object of its kind.
func (in *installer) prune(ctx context.Context, removed []inventoryEntry) diag.Diagnostics {
	gone, kept, diags := in.deleteAll(ctx, removed)
	for _, ref := range gone {
		tflog.Info(ctx, "pruned an object the new bundle no longer contains", map[string]any{"object": ref.String()})
	}
	if diags.HasError() {
		return diags
	}
	if len(kept) > 0 {
		diags.AddWarning("CRDs left in place",
			fmt.Sprintf("The new manifest no longer contains the CRD(s) %s. They were left in the cluster, and are no longer "+
				"tracked by this resource, because keep_crds_on_destroy is true and deleting a CRD deletes every object "+
				"of its kind. Delete them yourself (kubectl delete crd ...) if nothing uses them.", strings.Join(kept, ", ")))
	}
	if in.wait {
		diags.Append(in.waitGone(ctx, gone)...)
	}
	return diags
}

// uninstall deletes every inventory object in deletion order (CRDs only
// when keepCRDs is off) and waits until they are gone, so that a following
// install never meets a namespace that is still terminating.
func (in *installer) uninstall(ctx context.Context, entries []inventoryEntry) diag.Diagnostics {
	list := slices.Clone(entries)
	sortForDelete(list)
	gone, kept, diags := in.deleteAll(ctx, list)
	for _, name := range kept {
		tflog.Info(ctx, "keeping CRD (keep_crds_on_destroy)", map[string]any{"crd": name})
	}
	if diags.HasError() {
		return diags
	}
	diags.Append(in.waitGone(ctx, gone)...)
	return diags
}

// deleteAll deletes entries in their order, except CRDs when keepCRDs is
// on (kept names those), and returns the objects that existed. It stops at
// the first error.
func (in *installer) deleteAll(ctx context.Context, entries []inventoryEntry) ([]kube.ObjectRef, []string, diag.Diagnostics) {
	var diags diag.Diagnostics
	var gone []kube.ObjectRef
	var kept []string
	for _, e := range entries {
		if e.isCRD() && in.keepCRDs {
			kept = append(kept, e.Name)
			continue
		}
		ref, existed, d := in.deleteEntry(ctx, e)
		diags.Append(d...)
		if diags.HasError() {
			return gone, kept, diags
		}
		if existed {
			gone = append(gone, ref)
		}
	}
	return gone, kept, diags
}

// waitGone waits until the deleted objects are gone.
func (in *installer) waitGone(ctx context.Context, gone []kube.ObjectRef) diag.Diagnostics {
	if len(gone) == 0 {
		return nil
	}
	if err := in.c.WaitForDeletion(ctx, gone...); err != nil {
		return kube.Diagnostics(err, "wait", gone[0])
	}
	return nil
}

// deleteEntry deletes one inventory object; an object (or kind) already
// gone is success with existed=false.
func (in *installer) deleteEntry(ctx context.Context, e inventoryEntry) (kube.ObjectRef, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	ref := kube.ObjectRef{Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}
	m, err := in.c.MappingFor(ctx, e.gvk())
	if err != nil {
		if kube.IsNotFound(err) || kube.IsResourceNotServed(err) {
			return ref, false, diags
		}
		diags.Append(kube.Diagnostics(err, "delete", ref)...)
		return ref, false, diags
	}
	ref.GVR = m.GVR
	existed, err := in.c.Delete(ctx, m.GVR, e.Namespace, e.Name, kube.DeleteOptions{Propagation: metav1.DeletePropagationBackground})
	if kube.IsResourceNotServed(err) {
		// Its CRD went first (in this uninstall or out of band): the
		// object went with it.
		return ref, false, diags
	}
	if err != nil {
		diags.Append(kube.Diagnostics(err, "delete", ref)...)
		return ref, false, diags
	}
	return ref, existed, diags
}

// refresh reads every inventory object once and marks those deleted or
// changed outside Terraform. It is the whole cost of a refresh: one GET
// per object, no discovery for Kubernetes' own kinds.
func (in *installer) refresh(ctx context.Context, entries []inventoryEntry) ([]inventoryEntry, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := slices.Clone(entries)
	for i, e := range out {
		ref := kube.ObjectRef{Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}
		m, err := in.c.MappingFor(ctx, e.gvk())
		if err != nil {
			if kube.IsNotFound(err) || kube.IsResourceNotServed(err) {
				out[i].Drift = driftDeleted
				continue
			}
			diags.Append(kube.Diagnostics(err, "get", ref)...)
			return entries, diags
		}
		ref.GVR = m.GVR
		live, err := in.c.Get(ctx, m.GVR, e.Namespace, e.Name)
		if kube.IsNotFound(err) {
			out[i].Drift = driftDeleted
			continue
		}
		if err != nil {
			diags.Append(kube.Diagnostics(err, "get", ref)...)
			return entries, diags
		}
		gvk := e.gvk()
		digest, err := kube.ManagedDigest(live, in.manager, ignoreFor(gvk.Group, gvk.Kind))
		if err != nil {
			diags.AddError("Cannot fingerprint "+ref.String(), err.Error())
			return entries, diags
		}
		if live.GetDeletionTimestamp() != nil {
			out[i].Drift = driftDeleted
		} else if digest != e.Digest {
			out[i].Drift = driftChanged
		} else {
			out[i].Drift = driftNone
		}
	}
	return out, diags
}
