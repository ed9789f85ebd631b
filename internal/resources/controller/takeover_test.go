package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSelectorChanged(t *testing.T) {
	workload := func(kind string, selector map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind,
			"metadata": map[string]any{"name": "agent-sandbox-controller"}}}
		if selector != nil {
			u.Object["spec"] = map[string]any{"selector": selector}
		}
		return u
	}
	release := map[string]any{"matchLabels": map[string]any{"app": "agent-sandbox-controller"}}
	// helm/templates/_helpers.tpl:40-43 at v1.0.3, release name agent-sandbox.
	chart := map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "agent-sandbox", "app.kubernetes.io/instance": "agent-sandbox"}}
	for _, tc := range []struct {
		name          string
		live, desired *unstructured.Unstructured
		want          bool
	}{
		{"chart's Deployment, release's selector", workload("Deployment", chart), workload("Deployment", release), true},
		{"same selector", workload("Deployment", release), workload("Deployment", release), false},
		{"empty matchExpressions is the same", workload("Deployment", map[string]any{"matchLabels": map[string]any{"app": "agent-sandbox-controller"}, "matchExpressions": []any{}}), workload("Deployment", release), false},
		{"StatefulSet too", workload("StatefulSet", chart), workload("StatefulSet", release), true},
		{"not a workload", workload("Service", chart), workload("Service", release), false},
		{"desired without selector", workload("Deployment", chart), workload("Deployment", nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := selectorChanged(tc.live, tc.desired); got != tc.want {
				t.Fatalf("selectorChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
