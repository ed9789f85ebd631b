package isolationreport_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// TestAccIsolationReport_declaredRuntimeClass reads a namespace whose
// sandbox uses a RuntimeClass the report cannot recognise (handler
// kata-qemu here; GKE's MicroVM pools are the case it stands for, since GKE
// does not document their RuntimeClass): without a declaration the read
// has no warning about it (the report's violation says it); with the
// RuntimeClass in isolating_runtime_classes the read warns at that attribute
// that the isolation is declared and not verified, naming the RuntimeClass,
// its handler and the sandboxes counted on it, and a declared RuntimeClass
// the cluster does not have is named as missing.
func TestAccIsolationReport_declaredRuntimeClass(t *testing.T) {
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	cs := acctest.Clientset(t)
	rc := acctest.RandomName("microvm")
	if _, err := cs.NodeV1().RuntimeClasses().Create(t.Context(), &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: rc}, Handler: "kata-qemu",
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := cs.NodeV1().RuntimeClasses().Delete(ctx, rc, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting RuntimeClass %s: %v", rc, err)
		}
	})
	pod, err := runtimeDefaultPod(rc)
	if err != nil {
		t.Fatal(err)
	}
	sb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sandboxapi.SandboxGVR.GroupVersion().String(), "kind": "Sandbox",
		"metadata": map[string]any{"name": "microvm", "namespace": ns},
		"spec":     map[string]any{"podTemplate": map[string]any{"spec": pod}},
	}}
	if _, err := acctest.Dynamic(t).Resource(sandboxapi.SandboxGVR).Namespace(ns).Create(t.Context(), sb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	s := pt.New(t, provider.New("test"))
	if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{"kubernetes": map[string]any{"config_path": acctest.Kubeconfig()}})); len(errs) > 0 {
		t.Fatalf("configure: %s", pt.Describe(errs))
	}

	diags := s.ReadDataSource(t, typeName, map[string]any{"namespace": ns})
	if errs := pt.Errors(diags); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}
	for _, d := range diags {
		if d.Summary == "Isolation declared, not verified" {
			t.Errorf("warned without a declaration: %s", d.Detail)
		}
	}

	diags = s.ReadDataSource(t, typeName, map[string]any{"namespace": ns, "isolating_runtime_classes": []any{rc, "not-on-this-cluster"}})
	if errs := pt.Errors(diags); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}
	pt.ExpectWarningAt(t, diags, "isolating_runtime_classes", "Isolation declared, not verified",
		rc+` (handler "kata-qemu"): 1 sandbox(es)`, "not-on-this-cluster (handler none: the cluster has no such RuntimeClass): 0 sandbox(es)",
		"MicroVM", "cannot verify")
}

// runtimeDefaultPod is a hardened pod spec with RuntimeClass rc, as the
// API server accepts it in a Sandbox's pod template.
func runtimeDefaultPod(rc string) (map[string]any, error) {
	spec := corev1.PodSpec{
		RuntimeClassName:             &rc,
		AutomountServiceAccountToken: new(bool),
		Containers: []corev1.Container{{
			Name: "agent", Image: "registry.example/python-runtime:1",
		}},
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
}
