package cluster

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServedSandboxVersions(t *testing.T) {
	group := func(name string, versions ...string) metav1.APIGroup {
		g := metav1.APIGroup{Name: name}
		for _, v := range versions {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
		}
		return g
	}
	for _, tc := range []struct {
		name   string
		groups *metav1.APIGroupList
		want   []string
	}{
		{"nil", nil, []string{}},
		{"not installed", &metav1.APIGroupList{Groups: []metav1.APIGroup{group("apps", "v1")}}, []string{}},
		{"v0.5 shape, sorted", &metav1.APIGroupList{Groups: []metav1.APIGroup{
			group("extensions.agents.x-k8s.io", "v1beta1", "v1alpha1"),
			group("apps", "v1"),
			group("agents.x-k8s.io", "v1beta1", "v1alpha1"),
		}}, []string{"agents.x-k8s.io/v1alpha1", "agents.x-k8s.io/v1beta1", "extensions.agents.x-k8s.io/v1alpha1", "extensions.agents.x-k8s.io/v1beta1"}},
		{"older GKE add-on: v1alpha1 only", &metav1.APIGroupList{Groups: []metav1.APIGroup{group("agents.x-k8s.io", "v1alpha1")}}, []string{"agents.x-k8s.io/v1alpha1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := servedSandboxVersions(tc.groups); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
