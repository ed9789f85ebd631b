package kube

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestRewriteAll(t *testing.T) {
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{sandboxGVR: "SandboxList"})
	// Created through the client: the fake's tracker would otherwise file
	// them under a guessed resource name ("sandboxs").
	for _, o := range []*unstructured.Unstructured{sandbox("a", "one"), sandbox("b", "two"), sandbox("b", "gone")} {
		if _, err := fake.Resource(sandboxGVR).Namespace(o.GetNamespace()).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var updated []string
	fake.PrependReactor("update", "sandboxes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.UpdateAction).GetObject().(*unstructured.Unstructured)
		updated = append(updated, u.GetNamespace()+"/"+u.GetName())
		if u.GetName() == "gone" {
			// Deleted meanwhile: nothing left to migrate.
			return true, nil, apierrors.NewNotFound(sandboxGVR.GroupResource(), "gone")
		}
		return false, nil, nil
	})
	c := NewClientFromDynamic(fake, nil)
	n, err := c.RewriteAll(context.Background(), sandboxGVR, "mgr")
	if err != nil || n != 2 || len(updated) != 3 {
		t.Fatalf("RewriteAll = %d, %v; updates %v; want 2 rewritten of 3 written", n, err, updated)
	}

	fake.PrependReactor("update", "sandboxes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("conversion webhook for agents.x-k8s.io/v1alpha1 failed"))
	})
	if _, err := c.RewriteAll(context.Background(), sandboxGVR, "mgr"); err == nil || !apierrors.IsInternalError(errors.Unwrap(err)) {
		t.Errorf("a failing rewrite must stop the migration with its error, got %v", err)
	}
}

func TestWellKnownMappingAndMappingFor(t *testing.T) {
	m, ok := WellKnownMapping(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if !ok || m.GVR.Resource != "deployments" || !m.Namespaced {
		t.Errorf("Deployment: %+v %v", m, ok)
	}
	if m, ok := WellKnownMapping(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}); !ok || m.Namespaced {
		t.Errorf("ClusterRole: %+v %v", m, ok)
	}
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, ok := WellKnownMapping(widget); ok {
		t.Error("a custom kind must not be answered from the table")
	}
	static := meta.NewDefaultRESTMapper(nil)
	static.Add(widget, meta.RESTScopeRoot)
	c := NewClientFromDynamic(nil, static)
	got, err := c.MappingFor(context.Background(), widget)
	if err != nil || got.GVR.Resource != "widgets" || got.Namespaced {
		t.Errorf("custom kind through the mapper: %+v %v", got, err)
	}
	if _, err := NewClientFromDynamic(nil, nil).MappingFor(context.Background(), widget); err == nil {
		t.Error("no mapper: want an error")
	}
}
