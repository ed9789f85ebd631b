package kube

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectReady is a ReadyFunc for a mixed set of objects, in the spirit of
// kstatus (sigs.k8s.io/cli-utils): it knows the readiness rules of the
// kinds an installer applies and treats every other kind as ready once it
// exists. Use it with WaitForAll to wait for a whole bundle at once.
//
//   - Deployment: the controller has observed the current generation, every
//     replica runs the current template and is available, and the
//     Available condition is True. A Progressing=False condition with reason
//     ProgressDeadlineExceeded, or ReplicaFailure=True (quota, admission,
//     missing service account), can not resolve by waiting and fails the
//     wait at once.
//   - StatefulSet, DaemonSet: observed generation, all replicas updated and
//     ready.
//   - CustomResourceDefinition: Established and NamesAccepted are True; a
//     NamesAccepted=False (a name conflict with another CRD) fails at once.
//   - Namespace: phase Active.
//
// Any object with a deletionTimestamp is not ready (WaitForAll says so
// before calling this).
func ObjectReady(obj *unstructured.Unstructured) (bool, string, error) {
	switch obj.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		return deploymentReady(obj)
	case "StatefulSet.apps":
		want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if !found {
			want = 1 // the API server's default
		}
		return rolloutReady(obj, want, "readyReplicas", "updatedReplicas")
	case "DaemonSet.apps":
		want, _, _ := unstructured.NestedInt64(obj.Object, "status", "desiredNumberScheduled")
		return rolloutReady(obj, want, "numberReady", "updatedNumberScheduled")
	case "CustomResourceDefinition.apiextensions.k8s.io":
		return crdReady(obj)
	case "Namespace":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		if phase == "Active" {
			return true, "", nil
		}
		if phase == "" {
			phase = "unknown"
		}
		return false, "namespace phase is " + phase, nil
	default:
		return true, "", nil
	}
}

// Condition finds a status condition by type.
func Condition(obj *unstructured.Unstructured, typ string) (status, reason, message string, found bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		status, _ = m["status"].(string)
		reason, _ = m["reason"].(string)
		message, _ = m["message"].(string)
		return status, reason, message, true
	}
	return "", "", "", false
}

// generationObserved says whether status.observedGeneration has caught up
// with metadata.generation, and if not, why not.
func generationObserved(obj *unstructured.Unstructured) (bool, string) {
	gen := obj.GetGeneration()
	observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if !found || observed < gen {
		return false, fmt.Sprintf("the controller has not yet observed generation %d", gen)
	}
	return true, ""
}

func deploymentReady(obj *unstructured.Unstructured) (bool, string, error) {
	if s, reason, msg, ok := Condition(obj, "Progressing"); ok && s == string(metav1.ConditionFalse) && reason == "ProgressDeadlineExceeded" {
		return false, "", fmt.Errorf("rollout exceeded its progress deadline: %s", msg)
	}
	if s, reason, msg, ok := Condition(obj, "ReplicaFailure"); ok && s == string(metav1.ConditionTrue) {
		return false, "", fmt.Errorf("pods can not be created (%s): %s", reason, msg)
	}
	if ok, why := generationObserved(obj); !ok {
		return false, why, nil
	}
	want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		want = 1 // the API server's default
	}
	updated, _, _ := unstructured.NestedInt64(obj.Object, "status", "updatedReplicas")
	available, _, _ := unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
	total, _, _ := unstructured.NestedInt64(obj.Object, "status", "replicas")
	// One reason with every count that is not there yet, as kstatus words
	// it, so a timeout says both "the new pods are not up" and "the old
	// ones are still running".
	var pending []string
	if updated < want {
		pending = append(pending, fmt.Sprintf("%d of %d replicas updated", updated, want))
	}
	if available < want {
		pending = append(pending, fmt.Sprintf("%d of %d replicas available", available, want))
	}
	if total > updated {
		pending = append(pending, fmt.Sprintf("%d old replicas pending termination", total-updated))
	}
	if len(pending) > 0 {
		return false, strings.Join(pending, ", "), nil
	}
	if s, reason, msg, ok := Condition(obj, "Available"); !ok || s != string(metav1.ConditionTrue) {
		return false, DescribeCondition("Available", s, reason, msg), nil
	}
	return true, "", nil
}

// rolloutReady covers StatefulSets and DaemonSets, whose status fields
// differ only in name: want replicas, all updated and ready.
func rolloutReady(obj *unstructured.Unstructured, want int64, readyField, updatedField string) (bool, string, error) {
	if ok, why := generationObserved(obj); !ok {
		return false, why, nil
	}
	ready, _, _ := unstructured.NestedInt64(obj.Object, "status", readyField)
	updated, _, _ := unstructured.NestedInt64(obj.Object, "status", updatedField)
	switch {
	case updated < want:
		return false, fmt.Sprintf("%d of %d replicas updated", updated, want), nil
	case ready < want:
		return false, fmt.Sprintf("%d of %d replicas ready", ready, want), nil
	}
	return true, "", nil
}

func crdReady(obj *unstructured.Unstructured) (bool, string, error) {
	if s, reason, msg, ok := Condition(obj, "NamesAccepted"); ok && s == string(metav1.ConditionFalse) {
		return false, "", fmt.Errorf("its names are not accepted (%s): %s", reason, msg)
	}
	var pending []string
	for _, typ := range []string{"NamesAccepted", "Established"} {
		if s, reason, msg, ok := Condition(obj, typ); !ok || s != string(metav1.ConditionTrue) {
			pending = append(pending, DescribeCondition(typ, s, reason, msg))
		}
	}
	if len(pending) > 0 {
		return false, strings.Join(pending, "; "), nil
	}
	return true, "", nil
}

// DescribeCondition renders a condition as people read it:
// `Ready=False (Reason): message`, or "no Ready condition reported yet"
// when status is empty.
func DescribeCondition(typ, status, reason, message string) string {
	if status == "" {
		return fmt.Sprintf("no %s condition reported yet", typ)
	}
	out := fmt.Sprintf("%s=%s", typ, status)
	if reason != "" {
		out += " (" + reason + ")"
	}
	if message != "" {
		out += ": " + message
	}
	return out
}
