package warmpool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// poolReady is the readiness of a pool: the controller has acted on the
// current generation (so a count from before a scale does not count), and
// exactly the wanted number of sandboxes exists and is ready. A pool
// scaled down is not ready while it still holds the surplus. The pool has
// no conditions upstream, so there is no failure it could report.
//
// status.observedGeneration exists only from agent-sandbox v0.5.6
// (extensions/api/v1beta1/sandboxwarmpool_types.go:113 at v0.5.6; v0.5.0 to
// v0.5.5 have no such field, and their CRDs prune it). Where it is not
// reported the counts alone decide here, and waitReady then checks the
// pool's sandboxes themselves (sandboxesReady).
func poolReady(obj *unstructured.Unstructured) (bool, string, error) {
	pool, err := object.Decode[extv1beta1.SandboxWarmPool](Kind, obj)
	if err != nil {
		return false, "", err
	}
	if _, hasStatus := obj.Object["status"]; !hasStatus && liveReplicas(pool) > 0 {
		return false, "no status reported yet (is the agent-sandbox controller running with its extensions?)", nil
	}
	if gen, seen := pool.Generation, pool.Status.ObservedGeneration; seen != 0 && seen < gen {
		return false, fmt.Sprintf("the controller has not yet acted on generation %d (it has on %d)", gen, seen), nil
	}
	want := liveReplicas(pool)
	ready, have := int64(pool.Status.ReadyReplicas), int64(pool.Status.Replicas)
	switch {
	case have > want:
		return false, fmt.Sprintf("%d of %d sandboxes ready, %d more to be removed", min(ready, want), want, have-want), nil
	case ready < want:
		return false, fmt.Sprintf("%d of %d sandboxes ready", ready, want), nil
	}
	return true, "", nil
}

// waitReady watches the pool until poolReady, and returns the pool as last
// seen (the object the state is then made from, so no extra GET).
//
// On timeout the diagnostic names the pool's sandboxes that are not ready,
// each with its Ready condition, and whether the template is missing:
// "3 of 5 ready" alone does not say what to fix.
func waitReady(ctx context.Context, meta *conn.Meta, live *unstructured.Unstructured, what string) (*unstructured.Unstructured, diag.Diagnostics) {
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return live, diags
	}
	ref := Kind.Ref(live.GetNamespace(), live.GetName())
	start := time.Now()
	tflog.Info(ctx, "waiting for the warm pool's sandboxes to be ready", map[string]any{"pool": ref.String()})
	last, err := c.WaitForObject(ctx, ref, poolReady, kube.FailIfMissing())
	if last == nil {
		last = live
	}
	if err == nil {
		err = sandboxesReady(ctx, c, last)
	}
	if err == nil {
		tflog.Info(ctx, "warm pool ready", map[string]any{"pool": ref.String(), "elapsed_ms": time.Since(start).Milliseconds()})
		return last, diags
	}
	var waitErr *kube.WaitError
	if !errors.As(err, &waitErr) || waitErr.Failed {
		diags.Append(kube.Diagnostics(err, "wait", ref)...)
		return last, diags
	}
	// The wait's context has ended; the diagnosis gets a short one of its own.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	diags.AddError("Warm pool not ready", describeUnready(dctx, meta, last, waitErr, what))
	return last, diags
}

// sandboxesReady is the second half of the wait where the release does not
// report status.observedGeneration (before v0.5.6): the counts in the status
// may predate the change just applied, so the pool's sandboxes themselves
// must be there and ready, and no surplus one left (a sandbox being deleted
// is not ready). Where observedGeneration is reported it returns at once.
func sandboxesReady(ctx context.Context, c *kube.Client, obj *unstructured.Unstructured) error {
	pool, err := object.Decode[extv1beta1.SandboxWarmPool](Kind, obj)
	if err != nil {
		return err
	}
	want := liveReplicas(pool)
	if pool.Status.ObservedGeneration != 0 || want == 0 {
		return nil
	}
	selector := pool.Status.Selector
	if selector == "" {
		selector = sandboxapi.WarmPoolSelector(pool.Name)
	}
	tflog.Debug(ctx, "the controller does not report the pool's observedGeneration (agent-sandbox before v0.5.6): checking its sandboxes", map[string]any{
		"selector": selector, "want": want,
	})
	return c.WaitForSelector(ctx, sandboxapi.SandboxGVR, pool.Namespace, selector, int(want), func(sb *unstructured.Unstructured) (bool, string, error) {
		ok, why := sandboxReady(sb)
		return ok, why, nil
	})
}

// describeUnready says why pool is not ready: its count, each sandbox that
// is not ready with its Ready condition (one LIST by the pool's selector),
// and a template that does not exist (one GET).
func describeUnready(ctx context.Context, meta *conn.Meta, obj *unstructured.Unstructured, waitErr *kube.WaitError, what string) string {
	ref := Kind.Ref(obj.GetNamespace(), obj.GetName())
	var b strings.Builder
	verb := "timed out"
	if errors.Is(waitErr.Err, context.Canceled) {
		verb = "was cancelled"
	}
	_, reason, _ := poolReady(obj)
	fmt.Fprintf(&b, "Waiting for %s to be ready %s after %s: %s.\n", ref, verb, waitErr.Elapsed.Round(time.Second), reason)

	pool, err := object.Decode[extv1beta1.SandboxWarmPool](Kind, obj)
	if err != nil {
		return b.String()
	}
	want := liveReplicas(pool)
	c, diags := meta.Kube(ctx)
	if diags.HasError() {
		return b.String()
	}
	if _, found, d := templateKind.Read(ctx, meta, pool.Namespace, pool.Spec.TemplateRef.Name); !d.HasError() && !found {
		fmt.Fprintf(&b, "\nIts template, SandboxTemplate %q, does not exist in namespace %q (any more), so the controller "+
			"cannot create sandboxes. Create it, or point `template` at an existing one.\n", pool.Spec.TemplateRef.Name, pool.Namespace)
	}
	selector := pool.Status.Selector
	if selector == "" {
		selector = sandboxapi.WarmPoolSelector(pool.Name)
	}
	list, err := c.List(ctx, sandboxapi.SandboxGVR, pool.Namespace, selector)
	if err != nil {
		fmt.Fprintf(&b, "\nListing the pool's sandboxes (%s) failed: %v.\n", selector, err)
	} else {
		var lines []string
		for i := range list.Items {
			sb := &list.Items[i]
			if ok, why := sandboxReady(sb); !ok {
				lines = append(lines, fmt.Sprintf("  - %s: %s", kube.ObjectRef{GVR: sandboxapi.SandboxGVR, Kind: agentsv1beta1.SandboxKind, Namespace: sb.GetNamespace(), Name: sb.GetName()}, why))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\nSandboxes of the pool that are not ready:\n%s\n", strings.Join(lines, "\n"))
		}
		if n := int64(len(list.Items)); n < want {
			fmt.Fprintf(&b, "\nOnly %d of the %d sandboxes exist. The agent-sandbox controller creates them from the "+
				"template; check that it is running (and its logs) if they do not appear.\n", n, want)
		}
	}
	fmt.Fprintf(&b, "\nThe pool itself was %s. The limit is the `timeouts` block's `%s`: raise it if sandboxes are merely "+
		"slow to start (image pulls, node scale-up), otherwise look at the sandboxes above and their pods "+
		"(kubectl describe) for what holds them up. Set `wait_for_ready = false` to not wait at all.", pastTense(what), what)
	return b.String()
}

func pastTense(what string) string {
	if what == "create" {
		return "created"
	}
	return "updated"
}

// sandboxReady reads a sandbox's Ready condition, described as people read
// it: `Ready=False (DependenciesNotReady): Pod exists with phase: Pending`,
// followed by the PodScheduled condition when the pod cannot be scheduled,
// which is the usual reason and otherwise needs a kubectl describe.
func sandboxReady(sb *unstructured.Unstructured) (bool, string) {
	if sb.GetDeletionTimestamp() != nil {
		return false, "being deleted"
	}
	status, reason, message, found := kube.Condition(sb, agentsv1beta1.SandboxConditionReady.String())
	switch {
	case !found:
		return false, "no Ready condition reported yet"
	case status == "True":
		return true, ""
	}
	out := kube.DescribeCondition(agentsv1beta1.SandboxConditionReady.String(), status, reason, message)
	if s, r, m, ok := kube.Condition(sb, agentsv1beta1.SandboxConditionPodScheduled.String()); ok && s == "False" {
		out += "; " + kube.DescribeCondition(agentsv1beta1.SandboxConditionPodScheduled.String(), s, r, m)
	}
	return false, out
}
