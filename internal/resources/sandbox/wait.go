package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// goal is the condition a wait is for: Ready while Running, Suspended
// while Suspended.
func goal(mode string) agentsv1beta1.ConditionType {
	if mode == string(agentsv1beta1.SandboxOperatingModeSuspended) {
		return agentsv1beta1.SandboxConditionSuspended
	}
	return agentsv1beta1.SandboxConditionReady
}

// check judges one observed Sandbox for the wait: done when the goal
// condition is True for the current generation. A sandbox whose pod has
// finished or whose shutdown time has passed can never become ready, so
// those end the wait at once instead of at the timeout. The reason lists
// every condition the controller reports, so that a timeout says why
// (e.g. "Ready=False (DependenciesNotReady): Pod exists with phase:
// Pending; PodScheduled=False (Unschedulable): 0/3 nodes are available").
func check(want agentsv1beta1.ConditionType) kube.ReadyFunc {
	return func(obj *unstructured.Unstructured) (bool, string, error) {
		sb, err := object.Decode[agentsv1beta1.Sandbox](Kind, obj)
		if err != nil {
			return false, "", err
		}
		gen := sb.Generation
		c := meta.FindStatusCondition(sb.Status.Conditions, want.String())
		if c != nil && c.ObservedGeneration >= gen && c.Status == metav1.ConditionTrue {
			return true, "", nil
		}
		if want == agentsv1beta1.SandboxConditionReady {
			if r := meta.FindStatusCondition(sb.Status.Conditions, want.String()); r != nil && r.ObservedGeneration >= gen && r.Status == metav1.ConditionFalse {
				switch r.Reason {
				case agentsv1beta1.SandboxReasonPodFailed, agentsv1beta1.SandboxReasonPodSucceeded:
					return false, "", fmt.Errorf("its pod has finished (%s: %s), and a sandbox's pod is not restarted; "+
						"check the container's command and logs, then replace the sandbox", r.Reason, r.Message)
				case agentsv1beta1.SandboxReasonExpired:
					return false, "", fmt.Errorf("it has expired (shutdown_time has passed): %s", r.Message)
				}
			}
		}
		return false, describe(sb, want), nil
	}
}

// describe renders the sandbox's conditions, the awaited one first.
func describe(sb *agentsv1beta1.Sandbox, want agentsv1beta1.ConditionType) string {
	var parts []string
	add := func(c metav1.Condition) {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		if c.Message != "" {
			s += ": " + c.Message
		}
		if c.ObservedGeneration < sb.Generation {
			s += fmt.Sprintf(" [from generation %d, the sandbox is at %d]", c.ObservedGeneration, sb.Generation)
		}
		parts = append(parts, s)
	}
	if c := meta.FindStatusCondition(sb.Status.Conditions, want.String()); c != nil {
		add(*c)
	} else {
		parts = append(parts, fmt.Sprintf("no %s condition reported yet (is the agent-sandbox controller running?)", want))
	}
	for _, c := range sb.Status.Conditions {
		if c.Type != want.String() && c.Type != agentsv1beta1.SandboxConditionSuspended.String() {
			add(c)
		}
	}
	return strings.Join(parts, "; ")
}

// wait waits, when the plan asks for it, until the sandbox reaches the
// condition of its operating mode, and returns it as last observed (so
// that the status needs no further request).
func wait(ctx context.Context, c object.Call, live *unstructured.Unstructured, m, _ *resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	if !m.WaitForReady.ValueBool() {
		return nil, nil
	}
	kc, diags := c.Meta.Kube(ctx)
	if diags.HasError() {
		return nil, diags
	}
	want := goal(m.OperatingMode.ValueString())
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	start := time.Now()
	last, err := kc.WaitForObject(ctx, ref, check(want), kube.FailIfMissing())
	if err != nil {
		diags.Append(kube.Diagnostics(err, "wait", ref)...)
		return last, diags
	}
	tflog.Info(ctx, "sandbox reached its condition", map[string]any{
		"sandbox": ref.String(), "condition": want.String(), "elapsed_ms": time.Since(start).Milliseconds(),
	})
	return last, diags
}
