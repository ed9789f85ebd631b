package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// sandboxCRDName is the CRD every agent-sandbox installation has, managed
// add-on or not.
const sandboxCRDName = "sandboxes.agents.x-k8s.io"

// GKE's add-on manager marks every object it reconciles with one of these
// label keys; an agent-sandbox CRD carrying one was installed by GKE's
// managed add-on, not by a release bundle.
var gkeManagedLabelKeys = []string{"addonmanager.kubernetes.io/mode"}

const gkeComponentLabelPrefix = "components.gke.io/"

// gkeClusterNamer is implemented by provider data that knows the GKE cluster
// the Kubernetes connection was derived from (kubernetes.gke_cluster).
type gkeClusterNamer interface {
	GKECluster() string
}

// detectManagedAddon looks for GKE's managed Agent Sandbox add-on. Two
// sources, either is enough:
//   - the cluster itself: the Sandbox CRD labelled by GKE's add-on manager
//     (one GET, works on any connection);
//   - the GKE API, when the provider reaches the cluster through
//     kubernetes.gke_cluster: AddonsConfig.AgentSandboxConfig.Enabled.
//
// It returns a human description of the evidence, or "" when none.
func detectManagedAddon(ctx context.Context, meta *conn.Meta, c *kube.Client) (string, diag.Diagnostics) {
	var diags diag.Diagnostics
	crd, err := c.Get(ctx, kube.CRDGVR, "", sandboxCRDName)
	switch {
	case err == nil:
		if ev := addonLabelEvidence(crd.GetLabels()); ev != "" {
			return fmt.Sprintf("CustomResourceDefinition %q carries the label %s, which GKE's add-on manager puts on the "+
				"objects of the managed add-on", sandboxCRDName, ev), diags
		}
	case kube.IsNotFound(err):
	default:
		diags.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: kube.CRDGVR, Kind: "CustomResourceDefinition", Name: sandboxCRDName})...)
		return "", diags
	}

	namer, ok := any(meta).(gkeClusterNamer)
	if !ok {
		return "", diags
	}
	name := namer.GKECluster()
	if name == "" {
		return "", diags
	}
	g, d := meta.GKE(ctx)
	if d.HasError() {
		// The Kubernetes connection was built from this very client, so
		// this does not happen in practice; do not block on it.
		tflog.Warn(ctx, "cannot check GKE for the managed Agent Sandbox add-on", map[string]any{"cluster": name})
		return "", diags
	}
	cluster, err := g.GetCluster(ctx, name)
	if err != nil {
		diags.AddError("Cannot read the GKE cluster",
			fmt.Sprintf("Reading %s to check whether GKE's managed Agent Sandbox add-on is enabled failed: %v", name, err))
		return "", diags
	}
	if gkeapi.AgentSandboxAddonEnabled(cluster) {
		return fmt.Sprintf("GKE cluster %s has addonsConfig.agentSandboxConfig.enabled = true", name), diags
	}
	return "", diags
}

// addonLabelEvidence names the GKE add-on label among labels, or "".
func addonLabelEvidence(labels map[string]string) string {
	for _, k := range gkeManagedLabelKeys {
		if v, ok := labels[k]; ok {
			return fmt.Sprintf("%s=%s", k, v)
		}
	}
	var keys []string
	for k := range labels {
		if strings.HasPrefix(k, gkeComponentLabelPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return fmt.Sprintf("%s=%s", keys[0], labels[keys[0]])
}

// managedAddonDiagnostic explains the refusal and how to choose.
func managedAddonDiagnostic(evidence string) diag.Diagnostic {
	return diag.NewErrorDiagnostic("GKE's managed Agent Sandbox add-on is enabled on this cluster",
		fmt.Sprintf("Not installing the open-source controller: %s.\n\n"+
			"The add-on runs its own agent-sandbox controller and owns the CRDs. A second controller would reconcile "+
			"the same Sandbox objects and the two installers would overwrite each other's CRDs, so nothing was applied.\n\n"+
			"Choose one per cluster:\n"+
			"  - keep the managed add-on (Google upgrades and patches it): remove this agentsandbox_controller resource "+
			"and manage the add-on with agentsandbox_gke_addon;\n"+
			"  - or use the open-source controller (pin a version, air-gapped mirrors, controller flags): disable the "+
			"add-on first (destroy the agentsandbox_gke_addon resource that enabled it, or turn "+
			"addonsConfig.agentSandboxConfig.enabled off through the GKE API or console), then apply again.\n\n"+
			"The guide \"Installing and upgrading the agent-sandbox controller\" compares the two.", evidence))
}
