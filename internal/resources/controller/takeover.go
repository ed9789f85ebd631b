package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// Taking over an installation made by another tool.
//
// The objects of an installation made by `helm install` of upstream's chart
// (helm/ in the module sigs.k8s.io/agent-sandbox) or by `kubectl apply -f`
// of a release asset have the names of the release's objects, so the
// installer applies over them. Two things server-side apply alone does not
// do:
//
//  1. Remove what the other tool set and the release does not: Helm's labels
//     and annotations (helm.sh/chart, app.kubernetes.io/managed-by,
//     meta.helm.sh/release-name), kubectl's last-applied-configuration, the
//     chart's Service selector keys (app.kubernetes.io/name and /instance,
//     helm/templates/service.yaml:9 and _helpers.tpl:40-43 at v1.0.3) and
//     probes. Apply never removes a field another manager owns, so the
//     fields of the installers' field managers are first moved to the
//     provider's (kube.Client.TakeOverFields); the apply then removes those
//     the release does not set.
//  2. Change a workload's selector, which the API server refuses to update
//     (spec.selector of a Deployment is immutable in apps/v1). The chart
//     selects the controller pods by app.kubernetes.io/name and
//     app.kubernetes.io/instance (helm/templates/deployment.yaml:10-12), the
//     release manifests by app: agent-sandbox-controller
//     (k8s/controller.yaml). Such a workload is replaced: deleted with
//     foreground propagation (its ReplicaSets and pods go first), waited
//     for until it is gone, then created. Only the controller's own pods
//     restart: sandbox pods belong to their Sandbox objects, not to the
//     controller Deployment, and keep running.

// installerManagers are the field managers of the tools an installation is
// taken over from: Helm (v3 updates, v4 applies, both as "helm") and
// kubectl's apply (client- and server-side), create and replace.
var installerManagers = []string{"helm", "kubectl-client-side-apply", "kubectl", "kubectl-create", "kubectl-replace"}

func installedByAnotherTool(e metav1.ManagedFieldsEntry) bool {
	return slices.Contains(installerManagers, e.Manager)
}

// Helm's ownership annotations on the objects of a release.
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// takeover records what an install took over, for the user.
type takeover struct {
	// managers are the other tools' field managers the fields were taken
	// from, per object.
	managers map[string][]string
	// helmReleases are the Helm releases ("namespace/name") whose objects
	// were taken over.
	helmReleases map[string]bool
	// replaced are the workloads replaced because their selector differed.
	replaced []string
}

// note records live (before anything changed it) and the managers taken
// from it.
func (t *takeover) note(ref kube.ObjectRef, live *unstructured.Unstructured, managers []string) {
	if len(managers) > 0 {
		if t.managers == nil {
			t.managers = map[string][]string{}
		}
		t.managers[ref.String()] = managers
	}
	ann := live.GetAnnotations()
	if name := ann[helmReleaseNameAnnotation]; name != "" {
		if t.helmReleases == nil {
			t.helmReleases = map[string]bool{}
		}
		t.helmReleases[ann[helmReleaseNamespaceAnnotation]+"/"+name] = true
	}
}

// diagnostics tells the user what was taken over and what is left to do.
func (t *takeover) diagnostics() diag.Diagnostics {
	var diags diag.Diagnostics
	if len(t.helmReleases) == 0 {
		return diags
	}
	releases := make([]string, 0, len(t.helmReleases))
	for r := range t.helmReleases {
		releases = append(releases, r)
	}
	sort.Strings(releases)
	var b strings.Builder
	fmt.Fprintf(&b, "The agent-sandbox objects of the Helm release(s) %s are now managed by this resource: the fields "+
		"Helm set were taken over, and Helm's labels and annotations removed", strings.Join(releases, ", "))
	if len(t.replaced) > 0 {
		fmt.Fprintf(&b, "; %s was replaced, because the chart's pod selector differs from the release's and a "+
			"selector cannot be changed (the controller restarted; sandbox pods were not touched)", strings.Join(t.replaced, ", "))
	}
	b.WriteString(".\n\nHelm still keeps its record of the release, so `helm list` shows it and `helm uninstall` would " +
		"delete the objects this resource now manages (with the chart's Namespace, everything in it). Forget the " +
		"release without touching any object:\n")
	for _, r := range releases {
		ns, name, _ := strings.Cut(r, "/")
		fmt.Fprintf(&b, "\n  kubectl -n %s delete secret -l owner=helm,name=%s", ns, name)
	}
	diags.AddWarning("Taken over from Helm", b.String())
	return diags
}

// workloadKinds are the kinds whose spec.selector is immutable, so that a
// new selector needs a new object.
var workloadKinds = map[string]bool{
	"Deployment.apps": true, "StatefulSet.apps": true, "DaemonSet.apps": true, "ReplicaSet.apps": true,
}

// selectorChanged says whether desired, a workload, selects its pods with
// another selector than live: the API server refuses to change it.
func selectorChanged(live, desired *unstructured.Unstructured) bool {
	if !workloadKinds[desired.GroupVersionKind().GroupKind().String()] {
		return false
	}
	want, found, _ := unstructured.NestedMap(desired.Object, "spec", "selector")
	if !found {
		return false
	}
	have, _, _ := unstructured.NestedMap(live.Object, "spec", "selector")
	return !equality.Semantic.DeepEqual(normalSelector(want), normalSelector(have))
}

// normalSelector drops empty parts, which the server omits.
func normalSelector(s map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				continue
			}
		case []any:
			if len(x) == 0 {
				continue
			}
		case nil:
			continue
		}
		out[k] = v
	}
	return out
}

// replaceObject deletes live with foreground propagation, waits until it
// is gone, and creates o in its place.
func (in *installer) replaceObject(ctx context.Context, o object, m kube.Mapping, ref kube.ObjectRef, live *unstructured.Unstructured) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	have, _, _ := unstructured.NestedMap(live.Object, "spec", "selector")
	want, _, _ := unstructured.NestedMap(o.Object, "spec", "selector")
	tflog.Info(ctx, "replacing "+ref.String()+": its selector cannot change", map[string]any{
		"live_selector": fmt.Sprint(have), "release_selector": fmt.Sprint(want),
	})
	if _, err := in.c.Delete(ctx, m.GVR, ref.Namespace, ref.Name, kube.DeleteOptions{Propagation: metav1.DeletePropagationForeground}); err != nil {
		diags.Append(kube.Diagnostics(err, "delete", ref)...)
		return nil, diags
	}
	if err := in.c.WaitForDeletion(ctx, ref); err != nil {
		diags.Append(kube.Diagnostics(err, "wait", ref)...)
		return nil, diags
	}
	out, err := in.c.Create(ctx, m.GVR, o.Unstructured, kube.ApplyOptions{FieldManager: in.manager, Force: true})
	if err != nil {
		diags.AddError("Cannot recreate "+ref.String(),
			fmt.Sprintf("%s selected its pods with %v, and the release selects them with %v; a selector cannot be "+
				"changed, so it was deleted to be created again, and creating it failed: %v\n\nThe object comes from %s. "+
				"Running apply again creates it.", ref, have, want, err, o.where()))
		return nil, diags
	}
	in.taken.replaced = append(in.taken.replaced, ref.String())
	return out, diags
}
