package sandbox_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccSandbox_readyLatency measures how soon the provider's wait
// notices a sandbox becoming ready: a poller reads the Sandbox every 5 ms
// while the wait runs, and the wait must return no later than shortly
// after the first poll that sees Ready=True (the watch delivers the status
// update, no polling interval in between). It logs create-to-ready and
// the notice delay for a few sandboxes.
func TestAccSandbox_readyLatency(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	ns := acctest.Namespace(t)
	kc, err := kube.NewClientForRESTConfig(acctest.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cm := conn.ForClients("agentsandbox", kc, nil)
	var delays []time.Duration
	for i := 0; i < 5; i++ {
		name := acctest.RandomName("latency")
		obj := sandbox.Kind.New()
		obj.SetName(name)
		obj.SetNamespace(ns)
		spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&agentsv1beta1.SandboxSpec{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedSlice(spec, []any{map[string]any{"name": "main", "image": "python:3.13"}}, "podTemplate", "spec", "containers")
		obj.Object["spec"] = spec

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		polled := make(chan time.Time, 1)
		go func() {
			for ctx.Err() == nil {
				live, err := acctest.GetObject(ctx, acctest.ObjectRef{GVR: sandbox.Kind.GVR, Namespace: ns, Name: name})
				if err == nil {
					var sb agentsv1beta1.Sandbox
					if runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &sb) == nil &&
						meta.IsStatusConditionTrue(sb.Status.Conditions, "Ready") {
						polled <- time.Now()
						return
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		t0 := time.Now()
		if _, diags := sandbox.Kind.Create(ctx, cm, obj); diags.HasError() {
			cancel()
			t.Fatal(diags)
		}
		if _, diags := sandbox.WaitFor(ctx, cm, ns, name, "Running"); diags.HasError() {
			cancel()
			t.Fatal(diags)
		}
		noticed := time.Now()
		var seen time.Time
		select {
		case seen = <-polled:
		case <-time.After(time.Second):
			// The watch was faster than the poller's next round.
			seen = noticed
		}
		cancel()
		delay := noticed.Sub(seen)
		delays = append(delays, delay)
		t.Logf("sandbox %d: create to ready (noticed by the wait) %s; noticed %s after a 5 ms poller first saw Ready",
			i, noticed.Sub(t0).Round(time.Millisecond), delay.Round(time.Millisecond))
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	// The median, not the worst: one scheduling stall on a loaded machine
	// (400 ms seen at load 20-40) says nothing about the mechanism, while a
	// polling wait (peers poll every second) puts the median near half its
	// interval.
	if median := delays[len(delays)/2]; median > 250*time.Millisecond {
		t.Errorf("the wait noticed readiness a median %s after it was visible (worst %s); a watch should take milliseconds", median, delays[len(delays)-1])
	}
}
