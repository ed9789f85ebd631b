package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

func sandboxWith(gen int64, conds ...metav1.Condition) *unstructured.Unstructured {
	sb := &agentsv1beta1.Sandbox{}
	sb.Name, sb.Namespace, sb.Generation = "agent", "agents", gen
	sb.Status.Conditions = conds
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sb)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func cond(typ string, status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen,
		LastTransitionTime: metav1.Now()}
}

func TestCheckJudgesReadyAndSuspended(t *testing.T) {
	ready := check(agentsv1beta1.SandboxConditionReady)
	suspended := check(goal("Suspended"))
	for _, tc := range []struct {
		name      string
		judge     func(*unstructured.Unstructured) (bool, string, error)
		obj       *unstructured.Unstructured
		done      bool
		failed    bool
		reasonHas []string
	}{
		{"ready", ready, sandboxWith(2, cond("Ready", "True", "DependenciesReady", "Pod is Ready", 2)), true, false, nil},
		{"no status yet", ready, sandboxWith(1), false, false, []string{"no Ready condition reported yet", "controller running"}},
		{"stale True from before the update", ready, sandboxWith(3, cond("Ready", "True", "DependenciesReady", "", 2)), false, false,
			[]string{"from generation 2, the sandbox is at 3"}},
		{"not scheduled", ready, sandboxWith(1,
			cond("Ready", "False", "DependenciesNotReady", "Pod exists with phase: Pending", 1),
			cond("PodScheduled", "False", "Unschedulable", "0/1 nodes are available", 1)), false, false,
			[]string{"Ready=False (DependenciesNotReady): Pod exists with phase: Pending", "PodScheduled=False (Unschedulable): 0/1 nodes"}},
		{"pod failed", ready, sandboxWith(1, cond("Ready", "False", "PodFailed", "Pod failed", 1)), false, true, nil},
		{"expired", ready, sandboxWith(1, cond("Ready", "False", "SandboxExpired", "Sandbox has expired", 1)), false, true, nil},
		{"suspended", suspended, sandboxWith(4,
			cond("Ready", "False", "SandboxSuspended", "Sandbox is suspended", 4),
			cond("Suspended", "True", "PodTerminated", "The pod is gone", 4)), true, false, nil},
		{"suspending", suspended, sandboxWith(4, cond("Suspended", "False", "PodTerminating", "The pod is terminating", 4)), false, false,
			[]string{"Suspended=False (PodTerminating)"}},
		// A suspended sandbox is not ready; that is not a failure of a
		// wait for Suspended.
		{"suspended is not a ready failure", suspended, sandboxWith(4, cond("Ready", "False", "SandboxSuspended", "", 4)), false, false,
			[]string{"no Suspended condition"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, reason, err := tc.judge(tc.obj)
			if done != tc.done || (err != nil) != tc.failed {
				t.Fatalf("done=%v err=%v reason=%q", done, err, reason)
			}
			for _, w := range tc.reasonHas {
				if !strings.Contains(reason, w) {
					t.Errorf("reason %q lacks %q", reason, w)
				}
			}
		})
	}
}

func TestFlattenTimeKeepsTheConfiguredSpelling(t *testing.T) {
	live := metav1.NewTime(time.Date(2030, 1, 2, 13, 4, 5, 0, time.UTC))
	for _, tc := range []struct{ prior, want string }{
		{"2030-01-02T15:04:05+02:00", "2030-01-02T15:04:05+02:00"}, // same instant, other zone
		{"2030-01-02T13:04:05.25Z", "2030-01-02T13:04:05.25Z"},     // the server drops fractions
		{"2030-01-02T13:04:06Z", "2030-01-02T13:04:05Z"},           // changed out of band: drift
		{"", "2030-01-02T13:04:05Z"},                               // import
	} {
		prior := types.StringNull()
		if tc.prior != "" {
			prior = types.StringValue(tc.prior)
		}
		if got := tfvalues.Time(rfc3339(&live), prior); got.ValueString() != tc.want {
			t.Errorf("prior %q: got %s, want %s", tc.prior, got.ValueString(), tc.want)
		}
	}
	if got := tfvalues.Time(rfc3339(nil), types.StringValue("2030-01-02T13:04:05Z")); !got.IsNull() {
		t.Errorf("removed out of band: got %v, want null", got)
	}
}

func TestPodSpecChangedIgnoresPodMetadata(t *testing.T) {
	// Built from the model types through refresh of two live sandboxes.
	mk := func(labels map[string]string, image string) types.Object {
		var m resourceModel
		sb := &agentsv1beta1.Sandbox{}
		sb.Spec.PodTemplate.ObjectMeta.Labels = labels
		sb.Spec.PodTemplate.Spec.Containers = append(sb.Spec.PodTemplate.Spec.Containers, corev1Container(image))
		obj, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(sb)
		if d := m.refresh(t.Context(), &unstructured.Unstructured{Object: obj}, "agentsandbox"); d.HasError() {
			t.Fatal(d)
		}
		return m.PodTemplate
	}
	a := mk(map[string]string{"team": "a"}, "python:3.12")
	if podSpecChanged(a, mk(map[string]string{"team": "b"}, "python:3.12")) {
		t.Error("a label change reaches the running pod; no warning needed")
	}
	if !podSpecChanged(a, mk(map[string]string{"team": "a"}, "python:3.13")) {
		t.Error("an image change does not reach the running pod; the plan must warn")
	}
}

func corev1Container(image string) corev1.Container {
	return corev1.Container{Name: "main", Image: image}
}
