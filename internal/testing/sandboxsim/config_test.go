package sandboxsim

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// TestLabelDomainsReadLikeTheController checks when the stand-in reads the
// allowed label domains, against a namespace of its own standing for the
// controller's: at start, and again only when the controller Deployment's
// pod template changes (a rollout restarts the real controller, which reads
// its configuration once, cmd/agent-sandbox-controller/main.go:511-528 at
// v0.5.6); never from a Deployment that does not mount the ConfigMap.
func TestLabelDomainsReadLikeTheController(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	l := &labelDomains{reader: e.client, namespace: ns, logger: testLogger}
	want := func(step string, domains ...string) {
		t.Helper()
		if got := l.get(); !slices.Equal(got, domains) {
			t.Fatalf("%s: domains %q, want %q", step, got, domains)
		}
	}
	rollout := func(step string) {
		t.Helper()
		if _, err := l.Reconcile(t.Context(), reconcile.Request{}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	if err := l.load(t.Context()); err != nil {
		t.Fatal(err)
	}
	want("no ConfigMap, no Deployment", sandboxapi.DefaultAllowedLabelDomain)

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: sandboxapi.ConfigMapName, Namespace: ns},
		Data:       map[string]string{sandboxapi.ConfigKeyAllowedLabelDomains: "Example.COM\nteam.example.org, "},
	}
	e.create(t, cm)
	rollout("ConfigMap created, no Deployment")
	want("ConfigMap created while running: not read until a restart", sandboxapi.DefaultAllowedLabelDomain)
	if err := l.load(t.Context()); err != nil {
		t.Fatal(err)
	}
	want("started with the ConfigMap, no Deployment", "example.com", "team.example.org")

	// The controller Deployment, mounting the ConfigMap as upstream's
	// extensions controller does (k8s/extensions.controller.yaml:36-44 at v0.5.6).
	dep := controllerDeployment(ns, true)
	e.create(t, dep)
	e.update(t, cm, func() { cm.Data[sandboxapi.ConfigKeyAllowedLabelDomains] = "example.net" })
	rollout("Deployment created")
	want("Deployment created: its pod starts and reads the ConfigMap", "example.net")

	e.update(t, cm, func() { cm.Data[sandboxapi.ConfigKeyAllowedLabelDomains] = "example.org" })
	e.update(t, dep, func() { dep.Spec.Replicas = ptr.To[int32](2) })
	rollout("scaled")
	want("ConfigMap changed and Deployment scaled: no rollout, no new read", "example.net")

	e.update(t, dep, func() {
		dep.Spec.Template.Annotations = map[string]string{"agentsandbox.dev/sandbox-config-sha256": "1"}
	})
	rollout("pod template changed")
	want("pod template changed: a rollout reads the ConfigMap", "example.org")

	e.update(t, cm, func() { cm.Data[sandboxapi.ConfigKeyAllowedLabelDomains] = " ,\n" })
	e.update(t, dep, func() {
		dep.Spec.Template.Annotations = map[string]string{"agentsandbox.dev/sandbox-config-sha256": "2"}
	})
	rollout("emptied")
	want("a ConfigMap naming no domain: the default", sandboxapi.DefaultAllowedLabelDomain)

	e.update(t, cm, func() { cm.Data[sandboxapi.ConfigKeyAllowedLabelDomains] = "example.com" })
	e.update(t, dep, func() {
		dep.Spec.Template.Spec.Volumes = nil
		dep.Spec.Template.Spec.Containers[0].VolumeMounts = nil
	})
	rollout("unmounted")
	want("a Deployment without the mount never sees the ConfigMap", sandboxapi.DefaultAllowedLabelDomain)
}

// controllerDeployment is a minimal controller Deployment in ns, mounting
// the ConfigMap when mounted is set.
func controllerDeployment(ns string, mounted bool) *appsv1.Deployment {
	labels := map[string]string{"app": controllerDeploymentName}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: controllerDeploymentName, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: controllerDeploymentName, Image: "example.com/controller:v0"}}},
			},
		},
	}
	if mounted {
		dep.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config-volume", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: sandboxapi.ConfigMapName}, Optional: ptr.To(true)},
		}}}
		dep.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config-volume", MountPath: sandboxapi.ConfigMountPath, ReadOnly: true}}
	}
	return dep
}
