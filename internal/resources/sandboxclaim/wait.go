package sandboxclaim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// claimStatus is what the provider reads from a claim's status.
type claimStatus struct {
	sandbox string
	podIPs  []string
	ready   bool
	// The Ready condition, if reported, and whether it describes the
	// claim's current generation.
	found                   bool
	status, reason, message string
	current                 bool
}

func readStatus(c *extv1beta1.SandboxClaim) claimStatus {
	st := claimStatus{sandbox: c.Status.Sandbox.Name, podIPs: c.Status.Sandbox.PodIPs}
	if st.podIPs == nil {
		st.podIPs = []string{}
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, extv1beta1.ClaimConditionReady)
	if cond == nil {
		return st
	}
	st.found = true
	st.status, st.reason, st.message = string(cond.Status), cond.Reason, cond.Message
	st.current = cond.ObservedGeneration == 0 || cond.ObservedGeneration >= c.Generation
	st.ready = st.current && cond.Status == metav1.ConditionTrue
	return st
}

// terminalReasons are the Ready reasons the controller does not get past by
// itself: only a change to the claim, its pool or its template resolves
// them, so waiting longer is pointless. Each comes with what to change.
var terminalReasons = map[string]string{
	extv1beta1.ReasonWarmPoolNotFound: "`warm_pool` names a SandboxWarmPool that does not exist in the claim's namespace. " +
		"Create it first: set `warm_pool = agentsandbox_warm_pool.<name>.name` so that Terraform orders them.",
	extv1beta1.ReasonTemplateNotFound: "The warm pool's SandboxTemplate does not exist. Create it, or point the pool at an existing one.",
	extv1beta1.ReasonInvalidMetadata: "The controller refused `additional_pod_metadata`. Label keys must be in its allowed label " +
		"domains (its allowed-label-domains setting, by default " + defaultAllowedLabelDomain + "), and may not change a label or " +
		"annotation the template sets.",
	extv1beta1.ReasonEnvVarsInjectionRejected: "The template does not let claims set these variables: its " +
		"`env_vars_injection_policy` must be `Allowed` (new variables) or `Overrides` (also replacing its own), and " +
		"`container_name` must name one of its containers.",
	extv1beta1.ReasonVolumeClaimTemplatesError: "The template does not allow the claim's volume claim templates " +
		"(its `volume_claim_templates_policy`).",
	extv1beta1.ReasonClaimExpired: "The claim has expired (`shutdown_time` passed, or `ttl_seconds_after_finished` after " +
		"its sandbox finished), so it will not get a sandbox. Move `shutdown_time` to the future, or remove it and apply " +
		"with -replace to get a new claim.",
	extv1beta1.ReasonSandboxExpired: "The claim's sandbox expired on its own (its shutdown time passed). Replace the " +
		"claim (terraform apply -replace) to get a new sandbox.",
}

// claimFailed is the error a wait ends with on a terminal reason.
type claimFailed struct{ reason, message string }

func (e *claimFailed) Error() string { return fmt.Sprintf("Ready=False (%s): %s", e.reason, e.message) }

// claimReady is the readiness of a claim: its Ready condition, for its
// current generation, is True. A terminal reason ends the wait at once.
func claimReady(obj *unstructured.Unstructured) (bool, string, error) {
	c, err := decode(obj)
	if err != nil {
		return false, "", err
	}
	st := readStatus(c)
	switch {
	case !st.found:
		return false, "no Ready condition reported yet (is the agent-sandbox controller running with its extensions?)", nil
	case !st.current:
		return false, fmt.Sprintf("the controller has not yet acted on generation %d", c.Generation), nil
	case st.ready:
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
	return false, out, nil
}

// waitReady watches the claim until claimReady and returns the claim as
// last seen (the state is made from it, so no extra GET).
func waitReady(ctx context.Context, meta *conn.Meta, live *unstructured.Unstructured) (*unstructured.Unstructured, diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return live, diags
	}
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	var mu sync.Mutex
	last := live
	check := func(obj *unstructured.Unstructured) (bool, string, error) {
		mu.Lock()
		last = obj.DeepCopy()
		mu.Unlock()
		return claimReady(obj)
	}
	start := time.Now()
	tflog.Info(ctx, "waiting for the sandbox claim to be ready", map[string]any{"claim": ref.String()})
	err := c.WaitFor(ctx, Kind.GVR, ref.Namespace, ref.Name, check, kube.FailIfMissing())
	mu.Lock()
	defer mu.Unlock()
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
