package sandboxclaim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// claimStatus is what the provider reads from a claim's status.
type claimStatus struct {
	sandbox string
	podIPs  []string
	// serviceFQDN is status.sandbox.serviceFQDN, "" when not reported (see
	// serviceFQDN).
	serviceFQDN string
	ready       bool
	// The Ready condition, if reported, and whether it describes the
	// claim's current generation.
	found                   bool
	status, reason, message string
	current                 bool
	// forwarded: the condition is the sandbox's own Ready condition, which
	// every v0.5.x claim controller copies unchanged, observedGeneration
	// included (extensions/controllers/sandboxclaim_controller.go:824-828
	// at v0.5.6, :582 at v0.5.0): there it is the sandbox's generation, not
	// the claim's, and says nothing about whether the claim's generation
	// was acted on. Upstream fixed it after v0.5.6 (main 365a29c8).
	forwarded          bool
	observedGeneration int64
}

// claimReasons are the Ready reasons the claim controller writes itself,
// always with the claim's generation (sandboxclaim_controller.go:693-837 at
// v0.5.6). Any other reason comes from the sandbox.
var claimReasons = map[string]bool{
	sandboxapi.ClaimReasonTemplateNotFound: true, sandboxapi.ClaimReasonWarmPoolNotFound: true,
	sandboxapi.ClaimReasonAdoptionConflict: true, sandboxapi.ClaimReasonSandboxCreatePending: true,
	sandboxapi.ClaimReasonInvalidMetadata: true, sandboxapi.ClaimReasonEnvVarsInjectionRejected: true,
	sandboxapi.ClaimReasonVolumeClaimTemplatesError: true, extv1beta1.ClaimExpiredReason: true,
	sandboxapi.ClaimReasonSandboxMissing: true, agentsv1beta1.SandboxReasonExpired: true,
	sandboxapi.ClaimReasonSandboxNotReady: true,
}

func readStatus(c *extv1beta1.SandboxClaim) claimStatus {
	st := claimStatus{sandbox: c.Status.SandboxStatus.Name, podIPs: c.Status.SandboxStatus.PodIPs, serviceFQDN: c.Status.SandboxStatus.ServiceFQDN}
	if st.podIPs == nil {
		st.podIPs = []string{}
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, agentsv1beta1.SandboxConditionReady.String())
	if cond == nil {
		return st
	}
	st.found = true
	st.status, st.reason, st.message = string(cond.Status), cond.Reason, cond.Message
	st.observedGeneration = cond.ObservedGeneration
	st.current = cond.ObservedGeneration == 0 || cond.ObservedGeneration >= c.Generation
	st.forwarded = !claimReasons[cond.Reason] && st.sandbox != ""
	// What the controller reports is what `ready` shows: a forwarded
	// condition is the sandbox's current readiness whatever its generation.
	st.ready = (st.current || st.forwarded) && cond.Status == metav1.ConditionTrue
	return st
}

// podMetadataWant is what the claim's additionalPodMetadata must have done
// to its sandbox once the controller acted on the claim: these labels and
// annotations present with these values, the removed keys gone (the
// controller rebuilds the sandbox's pod metadata from the template and the
// claim, sandboxclaim_controller.go:514-567 at v0.5.6).
type podMetadataWant struct {
	labels, annotations               map[string]string
	removedLabels, removedAnnotations []string
}

// sandboxGetter reads the claim's sandbox (nil: not available).
type sandboxGetter func(name string) (*unstructured.Unstructured, error)

// forwardedIsCurrent says whether a forwarded Ready condition describes
// the claim as it is now: it is still the sandbox's Ready condition, and the
// sandbox carries the claim's pod metadata, so the controller has acted on
// the claim's last change. Whether the sandbox's own condition has caught up
// with a later change of the sandbox (its generation) is not required: the
// claim controller's metadata sync bumps it, and waiting for that would
// wait on the sandbox controller, not on the claim.
// sameGeneration also requires the claim's copy to carry the sandbox's
// generation (v0.5.x, where it is not the claim's own; releases that put the
// claim's generation there pass false).
func forwardedIsCurrent(st claimStatus, sb *unstructured.Unstructured, want podMetadataWant, sameGeneration bool) (bool, string) {
	sc, err := decodeSandboxReady(sb)
	if err != nil {
		return false, err.Error()
	}
	switch {
	case sc == nil:
		return false, fmt.Sprintf("sandbox %s reports no Ready condition yet", sb.GetName())
	case string(sc.Status) != st.status || sc.Reason != st.reason || sameGeneration && sc.ObservedGeneration != st.observedGeneration:
		return false, fmt.Sprintf("the claim does not yet show its sandbox's Ready condition (%s, %s)", sc.Status, sc.Reason)
	}
	labels, _, _ := unstructured.NestedStringMap(sb.Object, "spec", "podTemplate", "metadata", "labels")
	annotations, _, _ := unstructured.NestedStringMap(sb.Object, "spec", "podTemplate", "metadata", "annotations")
	for _, kv := range []struct {
		what       string
		have, want map[string]string
		removed    []string
	}{
		{"label", labels, want.labels, want.removedLabels},
		{"annotation", annotations, want.annotations, want.removedAnnotations},
	} {
		for k, v := range kv.want {
			if got, ok := kv.have[k]; !ok || got != v {
				return false, fmt.Sprintf("the controller has not yet copied pod %s %s=%q to sandbox %s", kv.what, k, v, sb.GetName())
			}
		}
		for _, k := range kv.removed {
			if _, ok := kv.have[k]; ok {
				return false, fmt.Sprintf("the controller has not yet removed pod %s %s from sandbox %s", kv.what, k, sb.GetName())
			}
		}
	}
	return true, ""
}

func decodeSandboxReady(sb *unstructured.Unstructured) (*metav1.Condition, error) {
	conds, _, err := unstructured.NestedSlice(sb.Object, "status", "conditions")
	if err != nil {
		return nil, fmt.Errorf("reading sandbox %s: %w", sb.GetName(), err)
	}
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != agentsv1beta1.SandboxConditionReady.String() {
			continue
		}
		out := &metav1.Condition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
			return nil, fmt.Errorf("reading sandbox %s: %w", sb.GetName(), err)
		}
		return out, nil
	}
	return nil, nil
}

// pendingReasons are Ready reasons the controller gets past by itself,
// with what the user may do meanwhile; the wait goes on and, if it times
// out, names the reason and this advice.
var pendingReasons = map[string]string{
	// v0.5.x requeue such a claim every minute (sandboxclaim_controller.go:385-401
	// at v0.5.6), later releases also on the template's creation.
	sandboxapi.ClaimReasonTemplateNotFound: "the controller retries by itself (every minute up to v0.5.6) and the claim recovers " +
		"once the warm pool's SandboxTemplate exists; create it (in Terraform, make the pool depend on the template), or " +
		"point the pool at an existing one",
}

// terminalReasons are the Ready reasons the controller does not get past by
// itself: only a change to the claim, its pool or its template resolves
// them, so waiting longer is pointless. Each comes with what to change.
var terminalReasons = map[string]string{
	sandboxapi.ClaimReasonWarmPoolNotFound: "`warm_pool` names a SandboxWarmPool that does not exist in the claim's namespace. " +
		"Create it first: set `warm_pool = agentsandbox_warm_pool.<name>.name` so that Terraform orders them.",
	sandboxapi.ClaimReasonInvalidMetadata: "The controller refused `additional_pod_metadata`. Label keys must be in its allowed label " +
		"domains (by default " + defaultAllowedLabelDomain + "; agentsandbox_controller's allowed_label_domains sets others, and " +
		"the controller reads them when it starts), and may not change a label or annotation the template sets.",
	sandboxapi.ClaimReasonEnvVarsInjectionRejected: "The template does not let claims set these variables: its " +
		"`env_vars_injection_policy` must be `Allowed` (new variables) or `Overrides` (also replacing its own), and " +
		"`container_name` must name one of its containers.",
	sandboxapi.ClaimReasonVolumeClaimTemplatesError: "The template does not allow the claim's volume claim templates " +
		"(its `volume_claim_templates_policy`).",
	extv1beta1.ClaimExpiredReason: "The claim has expired (`shutdown_time` passed, or `ttl_seconds_after_finished` after " +
		"its sandbox finished), so it will not get a sandbox. Move `shutdown_time` to the future, or remove it and apply " +
		"with -replace to get a new claim.",
	agentsv1beta1.SandboxReasonExpired: "The claim's sandbox expired on its own (its shutdown time passed). Replace the " +
		"claim (terraform apply -replace) to get a new sandbox.",
}

// claimFailed is the error a wait ends with on a terminal reason.
type claimFailed struct{ reason, message string }

func (e *claimFailed) Error() string { return fmt.Sprintf("Ready=False (%s): %s", e.reason, e.message) }

// claimReady is the readiness of a claim: its Ready condition, for its
// current generation, is True. A terminal reason ends the wait at once.
// getSandbox (may be nil) reads the claim's sandbox, to tell whether a
// condition forwarded from it is current (see forwardedIsCurrent).
func claimReady(obj *unstructured.Unstructured, getSandbox sandboxGetter, want podMetadataWant) (bool, string, error) {
	c, err := object.Decode[extv1beta1.SandboxClaim](Kind, obj)
	if err != nil {
		return false, "", err
	}
	st := readStatus(c)
	switch {
	case !st.found:
		return false, "no Ready condition reported yet (is the agent-sandbox controller running with its extensions?)", nil
	case st.forwarded && getSandbox != nil:
		// Also when the generations happen to match: on v0.5.x that says
		// nothing about the claim, and a match is common (both start at 1).
		sb, err := getSandbox(st.sandbox)
		if err != nil {
			return false, fmt.Sprintf("reading sandbox %s: %v", st.sandbox, err), nil
		}
		if ok, why := forwardedIsCurrent(st, sb, want, !st.current); !ok {
			return false, why, nil
		}
	case !st.current:
		return false, fmt.Sprintf("the controller has not yet acted on generation %d", c.Generation), nil
	}
	if st.status == string(metav1.ConditionTrue) {
		return true, "", nil
	}
	if _, terminal := terminalReasons[st.reason]; terminal {
		return false, "", &claimFailed{reason: st.reason, message: st.message}
	}
	out := "Ready=" + st.status
	if st.reason != "" {
		out += " (" + st.reason + ")"
	}
	if st.message != "" {
		out += ": " + st.message
	}
	if hint, ok := pendingReasons[st.reason]; ok {
		out += "; " + hint
	}
	return false, out, nil
}

// waitReady watches the claim until claimReady and returns the claim as
// last seen (the state is made from it, so no extra GET).
func waitReady(ctx context.Context, meta *conn.Meta, live *unstructured.Unstructured, want podMetadataWant) (*unstructured.Unstructured, diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return live, diags
	}
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	getSandbox := func(name string) (*unstructured.Unstructured, error) {
		return c.Get(ctx, sandboxapi.SandboxGVR, ref.Namespace, name)
	}
	check := func(obj *unstructured.Unstructured) (bool, string, error) {
		return claimReady(obj, getSandbox, want)
	}
	start := time.Now()
	tflog.Info(ctx, "waiting for the sandbox claim to be ready", map[string]any{"claim": ref.String()})
	last, err := c.WaitForObject(ctx, ref, check, kube.FailIfMissing())
	if last == nil {
		last = live
	}
	if err == nil {
		tflog.Info(ctx, "sandbox claim ready", map[string]any{"claim": ref.String(), "elapsed_ms": time.Since(start).Milliseconds()})
		return last, diags
	}
	var failed *claimFailed
	if errors.As(err, &failed) {
		diags.AddError(fmt.Sprintf("Sandbox claim failed: %s", failed.reason),
			fmt.Sprintf("The agent-sandbox controller reports that %s cannot become ready: Ready=False, reason %s: %s\n\n%s",
				ref, failed.reason, failed.message, terminalReasons[failed.reason]))
		return last, diags
	}
	diags.Append(kube.Diagnostics(err, "wait", ref)...)
	return last, diags
}
