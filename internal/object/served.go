package object

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/client-go/discovery"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// servedGroup is what discovery says about one API group.
type servedGroup struct {
	// Versions the server serves for the group, sorted; empty when the group
	// is not served at all.
	Versions []string
	// Err is set when discovery itself failed; the other fields are then
	// meaningless.
	Err error
}

// has says whether version is among the served versions.
func (s servedGroup) has(version string) bool { return slices.Contains(s.Versions, version) }

// discoverGroup asks the API server which versions of group it serves.
//
// It is only ever called on the error path, after a request for the kind
// failed because the resource is not served: refreshes and applies that
// work never pay for discovery (the design promises one GET per object),
// and a plan never runs discovery (its only reads are the lookups of
// lookup.go).
func discoverGroup(ctx context.Context, c *kube.Client, group string) servedGroup {
	cs, err := c.Clientset()
	if err != nil {
		return servedGroup{Err: err}
	}
	groups, err := discovery.ToDiscoveryInterfaceWithContext(cs.Discovery()).ServerGroupsWithContext(ctx)
	if err != nil {
		return servedGroup{Err: err}
	}
	var out servedGroup
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		for _, v := range g.Versions {
			out.Versions = append(out.Versions, v.Version)
		}
	}
	slices.Sort(out.Versions)
	return out
}

// isSandboxGroup says whether group belongs to the agent-sandbox API, whose
// CRDs this provider itself can install; other groups get a generic hint.
func isSandboxGroup(group string) bool { return strings.HasSuffix(group, "agents.x-k8s.io") }

// notServed is the diagnosis of a request that failed because the cluster
// does not serve k's resource at k's version.
type notServed struct {
	kind  Kind
	group servedGroup
}

// otherVersionsOnly is true when the group is served, but never at the
// version this provider speaks: objects may well exist (for example as
// v1alpha1 on an older GKE add-on), they just cannot be read or written by
// this provider. That must not be mistaken for "the objects are gone".
func (n notServed) otherVersionsOnly() bool {
	return n.group.Err == nil && len(n.group.Versions) > 0 && !n.group.has(n.kind.GVR.Version)
}

// diagnostics says what was found and what is required.
func (n notServed) diagnostics(action string, ref kube.ObjectRef, err error) diag.Diagnostics {
	gvr := n.kind.GVR
	want := gvr.GroupVersion().String()
	what := n.kind.Kind
	if what == "" {
		what = gvr.Resource
	}
	var diags diag.Diagnostics
	request := fmt.Sprintf("Request: %s %s (API %s, resource %s). The API server answered that it does not serve this "+
		"resource (%v).", action, ref, want, gvr.Resource, err)

	switch {
	case n.group.Err != nil:
		// Discovery failed too: say so, and still give the general advice.
		diags.AddError(fmt.Sprintf("%s API %s not served", what, want),
			fmt.Sprintf("%s\n\nThe provider then asked the API server which versions of %s it serves, which failed "+
				"as well: %v.\n\n%s", request, gvr.Group, n.group.Err, installHint(gvr.Group, want)))

	case n.otherVersionsOnly():
		found := make([]string, len(n.group.Versions))
		for i, v := range n.group.Versions {
			found[i] = gvr.Group + "/" + v
		}
		hint := fmt.Sprintf("Install CustomResourceDefinitions that serve %s.", want)
		if isSandboxGroup(gvr.Group) {
			hint = fmt.Sprintf("An agent-sandbox controller older than v0.5, or a GKE managed add-on version that "+
				"serves only v1alpha1, is installed. Upgrade the controller (for example with an `agentsandbox_controller` "+
				"resource at v0.5.x or v1.0.x, which serve %s) or the GKE add-on to a version that serves %s. Objects "+
				"created under the old version stay in the cluster; this provider cannot read or change them.",
				want, gvr.Version)
		}
		diags.AddError(fmt.Sprintf("%s API version %s not served", what, gvr.Version),
			fmt.Sprintf("%s\n\nThe cluster serves %s, but this provider requires %s for %s.\n\n%s",
				request, strings.Join(found, ", "), want, what, hint))

	case n.group.has(gvr.Version):
		// The group version is there, only this resource is missing: one
		// CRD of a set was not installed (or was removed).
		hint := fmt.Sprintf("Install the CustomResourceDefinition for %s.", gvr.GroupResource())
		if isSandboxGroup(gvr.Group) {
			hint = fmt.Sprintf("The CustomResourceDefinition %s is missing while others of the group are installed. "+
				"The warm pool, claim and template kinds come with the controller's extensions: install the bundle "+
				"with extensions (`agentsandbox_controller` does by default), or enable the GKE add-on.", gvr.GroupResource())
		}
		diags.AddError(fmt.Sprintf("%s not installed", what),
			fmt.Sprintf("%s\n\nThe cluster serves %s, but not the resource %s.\n\n%s", request, want, gvr.Resource, hint))

	default:
		diags.AddError(fmt.Sprintf("%s API not installed", what),
			fmt.Sprintf("%s\n\nThe cluster serves no version of API group %s.\n\n%s",
				request, gvr.Group, installHint(gvr.Group, want)))
	}
	return diags
}

func installHint(group, want string) string {
	if isSandboxGroup(group) {
		return fmt.Sprintf("The agent-sandbox CRDs are not installed. Install them with an `agentsandbox_controller` "+
			"resource (and make this resource depend on it, so that Terraform creates the CRDs first), or enable "+
			"GKE's managed Agent Sandbox add-on with `agentsandbox_gke_addon`. This provider requires %s.", want)
	}
	return fmt.Sprintf("Install the CustomResourceDefinition that provides %s, or check that this version is "+
		"supported by the cluster's Kubernetes version.", want)
}

// diagnose turns an error from a request for k into diagnostics. A
// "resource not served" answer is diagnosed with one discovery of k's
// group, so that the message says which versions the cluster does serve;
// every other error is kube.Diagnostics'.
func (k Kind) diagnose(ctx context.Context, c *kube.Client, err error, action string, ref kube.ObjectRef) diag.Diagnostics {
	if !kube.IsResourceNotServed(err) {
		return kube.Diagnostics(err, action, ref)
	}
	return k.checkServed(ctx, c).diagnostics(action, ref, err)
}

// checkServed runs the discovery behind a "not served" answer.
func (k Kind) checkServed(ctx context.Context, c *kube.Client) notServed {
	n := notServed{kind: k, group: discoverGroup(ctx, c, k.GVR.Group)}
	tflog.Debug(ctx, "resource not served; discovered the group's versions", map[string]any{
		"group": k.GVR.Group, "required": k.GVR.Version, "served": n.group.Versions,
	})
	return n
}
