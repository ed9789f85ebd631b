package sandboxclaim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// The controller accepts a claim's pod label only in its allowed label
// domains (extensions/controllers/sandboxclaim_controller.go:1554-1573 at
// v0.5.6), which it reads when it starts from its optional ConfigMap
// agent-sandbox-config (agentsandbox_controller's allowed_label_domains; see
// package sandboxapi). A label outside them is accepted by the API server
// and only refused by the controller (Ready=False, InvalidMetadata).
//
// So at plan, when the cluster can be read, checkLabelDomains reads what the
// controller in agent-sandbox-system (where upstream's releases run it)
// uses: its Deployment, and the ConfigMap when the Deployment mounts it.
// Two GETs per provider process (object.PlanRead, which also skips them
// when the cluster did not answer an earlier plan-time read), and none when
// the labels do not change. When the answer is not clear (the cluster cannot be read, the
// controller is not installed there yet, possibly by the same apply), the
// plan says nothing beyond the validators' rules, and the claim's wait
// reports the controller's refusal.

var (
	deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMapGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// controllerDomains is what the controller allows, as read from the cluster.
type controllerDomains struct {
	// domains is nil when not known (why says why).
	domains []string
	// from says where they come from, for the error message.
	from string
	why  string
}

// controllerDomainsKey names the read in object.PlanRead's cache.
type controllerDomainsKey struct{}

// readControllerDomains reads the allowed label domains of the controller
// in sandboxapi.ControllerNamespace, once per provider process and client
// (object.PlanRead).
func readControllerDomains(ctx context.Context, meta *conn.Meta) controllerDomains {
	out, why := object.PlanRead(ctx, meta, controllerDomainsKey{}, fetchControllerDomains)
	if why != "" {
		return controllerDomains{why: why}
	}
	return out
}

// fetchControllerDomains reads them; an error says there is no answer.
func fetchControllerDomains(ctx context.Context, c *kube.Client) (controllerDomains, error) {
	ns, name := sandboxapi.ControllerNamespace, sandboxapi.ControllerDeploymentName
	dep, err := c.Get(ctx, deploymentGVR, ns, name)
	if err != nil {
		// Not installed there (or not yet), not readable, not reachable.
		return controllerDomains{}, fmt.Errorf("the Deployment %s/%s: %w", ns, name, err)
	}
	if !sandboxapi.MountsConfig(dep.Object) {
		return controllerDomains{
			domains: sandboxapi.EffectiveLabelDomains(nil),
			from: fmt.Sprintf("the controller Deployment %s/%s does not mount the ConfigMap %s, so it uses the default",
				ns, name, sandboxapi.ConfigMapName),
		}, nil
	}
	cm, err := c.Get(ctx, configMapGVR, ns, sandboxapi.ConfigMapName)
	switch {
	case kube.IsNotFound(err):
		return controllerDomains{
			domains: sandboxapi.EffectiveLabelDomains(nil),
			from:    fmt.Sprintf("there is no ConfigMap %s/%s, so the controller uses the default", ns, sandboxapi.ConfigMapName),
		}, nil
	case err != nil:
		return controllerDomains{}, fmt.Errorf("the ConfigMap %s/%s: %w", ns, sandboxapi.ConfigMapName, err)
	}
	value, _, _ := unstructured.NestedString(cm.Object, "data", sandboxapi.ConfigKeyAllowedLabelDomains)
	configured := sandboxapi.ParseAllowedLabelDomains(value)
	from := fmt.Sprintf("the ConfigMap %s/%s (key %s)", ns, sandboxapi.ConfigMapName, sandboxapi.ConfigKeyAllowedLabelDomains)
	if len(configured) == 0 {
		from += " names none, so the controller uses the default"
	}
	return controllerDomains{domains: sandboxapi.EffectiveLabelDomains(configured), from: from}, nil
}

// checkLabelDomains refuses, at their attribute path, the planned pod
// labels (additional_pod_metadata.labels) whose domain the cluster's
// controller does not allow, unless the labels are unknown or the same as
// prior (null on create), or the controller's domains cannot be read.
func checkLabelDomains(ctx context.Context, meta *conn.Meta, plan, prior types.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	labels := podLabels(ctx, plan, &diags)
	if len(labels) == 0 {
		return diags
	}
	before := podLabels(ctx, prior, &diags)
	var changed []string
	for k := range labels {
		if _, had := before[k]; !had {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return diags
	}
	allowed := readControllerDomains(ctx, meta)
	if allowed.domains == nil {
		tflog.Debug(ctx, "claim pod label domains not checked against the controller's", map[string]any{"reason": allowed.why})
		return diags
	}
	sort.Strings(changed)
	for _, k := range changed {
		prefix, _, ok := strings.Cut(k, "/")
		if !ok || sandboxapi.LabelDomainAllowed(prefix, allowed.domains) {
			continue // a key without a domain is the validator's
		}
		diags.AddAttributeError(path.Root("additional_pod_metadata").AtName("labels").AtMapKey(k),
			"Pod label domain not allowed by the controller",
			fmt.Sprintf("The label %q has the domain %q, but the agent-sandbox controller of this cluster only accepts "+
				"claim pod labels in %s (%s; a label's domain must equal one of them or be a subdomain of one). "+
				"The API server would accept the claim and the controller would refuse it (Ready=False, "+
				"InvalidMetadata). Use a key in an allowed domain, or add the domain to agentsandbox_controller's "+
				"allowed_label_domains; if this configuration adds it in the same apply, apply the controller first "+
				"(terraform apply -target=<the agentsandbox_controller>), since a plan reads the controller's "+
				"configuration as it is now.",
				k, strings.ToLower(prefix), strings.Join(allowed.domains, ", "), allowed.from))
	}
	return diags
}

// podLabels reads additional_pod_metadata.labels; nil when unset or not
// known.
func podLabels(ctx context.Context, pm types.Object, diags *diag.Diagnostics) map[string]string {
	if pm.IsNull() || pm.IsUnknown() {
		return nil
	}
	var m podMetadataModel
	diags.Append(pm.As(ctx, &m, basetypesObjectAsOptions)...)
	if m.Labels.IsNull() || m.Labels.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	for k, v := range m.Labels.Elements() {
		if s, ok := v.(types.String); ok && !s.IsUnknown() {
			out[k] = s.ValueString()
		}
	}
	return out
}
