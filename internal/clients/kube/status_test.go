package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind string, generation int64, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "x", "generation": generation}}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg}
}

func TestObjectReady(t *testing.T) {
	available := []any{cond("Available", "True", "MinimumReplicasAvailable", ""), cond("Progressing", "True", "NewReplicaSetAvailable", "")}
	cases := []struct {
		name   string
		obj    *unstructured.Unstructured
		ready  bool
		reason string // substring of the reason, or of the error when fails
		fails  bool
	}{
		{"deployment available", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(2), "availableReplicas": int64(2), "conditions": available}), true, "", false},
		{"deployment default replicas", obj("apps/v1", "Deployment", 1, map[string]any{},
			map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1), "conditions": available}), true, "", false},
		{"deployment not observed", obj("apps/v1", "Deployment", 3, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "conditions": available}), false, "not yet observed generation 3", false},
		{"deployment rolling", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(1), "availableReplicas": int64(2)}), false, "1 of 2 replicas updated, 2 old replicas pending termination", false},
		{"deployment new pod pending, old one serving", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1), "availableReplicas": int64(1)}), false, "1 old replicas pending termination", false},
		{"deployment old pods", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(2), "availableReplicas": int64(2)}), false, "1 old replicas pending termination", false},
		{"deployment unavailable", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(2), "availableReplicas": int64(1)}), false, "1 of 2 replicas available", false},
		{"deployment nothing running", obj("apps/v1", "Deployment", 1, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1)}), false, "0 of 1 replicas available", false},
		{"deployment deadline exceeded", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Progressing", "False", "ProgressDeadlineExceeded", `ReplicaSet "x-1" has timed out progressing.`)}}), false, "progress deadline", true},
		{"deployment replica failure", obj("apps/v1", "Deployment", 2, map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("ReplicaFailure", "True", "FailedCreate", `pods "x-" is forbidden: exceeded quota`)}}), false, "exceeded quota", true},
		{"statefulset ready", obj("apps/v1", "StatefulSet", 1, map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(1), "readyReplicas": int64(2), "updatedReplicas": int64(2)}), true, "", false},
		{"statefulset not ready", obj("apps/v1", "StatefulSet", 1, map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(2)}), false, "1 of 2 replicas ready", false},
		{"daemonset ready", obj("apps/v1", "DaemonSet", 1, nil,
			map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(3), "numberReady": int64(3), "updatedNumberScheduled": int64(3)}), true, "", false},
		{"crd established", obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, nil,
			map[string]any{"conditions": []any{cond("NamesAccepted", "True", "", ""), cond("Established", "True", "", "")}}), true, "", false},
		{"crd new", obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, nil, nil), false, "no NamesAccepted condition reported yet", false},
		{"crd name conflict", obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", 1, nil,
			map[string]any{"conditions": []any{cond("NamesAccepted", "False", "MultipleNamesConflict", `"sandbox" is already in use`)}}), false, "already in use", true},
		{"namespace active", obj("v1", "Namespace", 0, nil, map[string]any{"phase": "Active"}), true, "", false},
		{"namespace terminating", obj("v1", "Namespace", 0, nil, map[string]any{"phase": "Terminating"}), false, "phase is Terminating", false},
		{"anything else exists", obj("v1", "ConfigMap", 0, nil, nil), true, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ready, reason, err := ObjectReady(c.obj)
			if c.fails {
				if err == nil || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("err = %v, want a failure mentioning %q", err, c.reason)
				}
				return
			}
			if err != nil || ready != c.ready || !strings.Contains(reason, c.reason) {
				t.Errorf("ObjectReady = %v, %q, %v; want %v, %q", ready, reason, err, c.ready, c.reason)
			}
		})
	}
}
