package sandboxtemplate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// checkSandboxd warns when the template's own network_policy admits
// anything but the sandbox router to the ports of a container that runs
// sandboxd (sandboxapi.SandboxdOf). sandboxd has no authentication (v1.0.3
// has no token option): whoever reaches its REST port reads and writes the
// sandbox's files, and its gRPC port runs commands, so the policy is its
// only guard. Only network_policy is the template's to judge: without it
// the controller's default admits the router alone, and with
// network_policy_management = "Unmanaged" the policy is another resource's
// (the isolation report judges what is enforced).
func checkSandboxd(ctx context.Context, m resourceModel, diags *diag.Diagnostics) {
	if m.PodTemplate.IsNull() || m.PodTemplate.IsUnknown() || m.NetworkPolicy.IsNull() || m.NetworkPolicy.IsUnknown() ||
		m.NetworkPolicyManagement.ValueString() == string(extv1beta1.NetworkPolicyManagementUnmanaged) {
		return
	}
	pt, d := podtemplate.Expand(ctx, m.PodTemplate)
	if d.HasError() {
		return // reported by the pod template's own checks
	}
	var local diag.Diagnostics
	r, ok := rules(ctx, m.NetworkPolicy, &local)
	if !ok {
		return
	}
	ingress, _, known, d := r.Render(ctx)
	if !known || d.HasError() {
		return
	}
	for _, c := range pt.Spec.Containers {
		sd, ok := sandboxapi.SandboxdOf(c)
		if !ok || sd.Loopback() {
			continue
		}
		var open []string
		for _, rule := range ingress {
			if !coversAny(rule.Ports, sd.Ports()) {
				continue
			}
			if who := beyondRouter(rule.From); who != "" {
				open = append(open, who)
			}
		}
		if len(open) > 0 {
			diags.AddAttributeWarning(path.Root("network_policy").AtName("ingress"), "sandboxd reachable beyond the router",
				fmt.Sprintf("Container %q runs sandboxd, which has no authentication: whoever reaches its port %d reads and "+
					"writes the sandbox's files, and its port %d runs commands in it. network_policy.ingress admits to those "+
					"ports: %s. Admit only the sandbox router (the default ingress), or start sandboxd with "+
					"--listen-host=127.0.0.1 when only the pod's own containers use it.", c.Name, sd.RESTPort, sd.GRPCPort, strings.Join(open, "; ")))
		}
	}
}

// coversAny says whether a rule's ports include one of ports (no ports:
// every port). A named port is taken to cover them: the pod may name its
// sandboxd port so.
func coversAny(rulePorts []networkingv1.NetworkPolicyPort, ports []int32) bool {
	if len(rulePorts) == 0 {
		return true
	}
	for _, p := range rulePorts {
		if p.Port == nil || p.Port.Type == intstr.String {
			return true
		}
		end := p.Port.IntVal
		if p.EndPort != nil {
			end = *p.EndPort
		}
		for _, port := range ports {
			if port >= p.Port.IntVal && port <= end {
				return true
			}
		}
	}
	return false
}

// beyondRouter describes the sources of a rule that are not the sandbox
// router (pods labelled app=sandbox-router); "" when it admits only the
// router.
func beyondRouter(from []networkingv1.NetworkPolicyPeer) string {
	if len(from) == 0 {
		return "every source"
	}
	var out []string
	for _, p := range from {
		switch {
		case p.IPBlock != nil:
			out = append(out, "the addresses "+p.IPBlock.CIDR)
		case p.PodSelector == nil:
			out = append(out, "every pod of the selected namespaces")
		case p.PodSelector.MatchLabels[sandboxapi.RouterLabelKey] != sandboxapi.RouterLabelValue:
			out = append(out, "pods that are not the router ("+podLabels(p)+")")
		}
	}
	return strings.Join(out, ", ")
}

func podLabels(p networkingv1.NetworkPolicyPeer) string {
	var parts []string
	for k, v := range p.PodSelector.MatchLabels {
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "any labels"
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
