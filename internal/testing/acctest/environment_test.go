package acctest

// These acceptance tests prove that the environment the harness provides is
// a real Kubernetes API with working controllers, not a mock: every claim
// is checked by reading the cluster through client-go. If one fails, the
// resource tests built on the harness cannot be trusted either.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// Facts of the local cluster (internal/devenv/localcluster) that these tests rely
// on; a cluster given through KUBECONFIG must offer the same.
const (
	gvisorRuntimeClass = "gvisor"
	gvisorNodeLabel    = "sandbox.gke.io/runtime"
	gvisorNodeValue    = "gvisor"
	// fakeImage is never pulled: kwok fakes the container runtime. The
	// reserved .invalid domain makes sure no real node could pull it either.
	fakeImage = "registry.invalid/acctest/pause:never-pulled"
)

// rolloutTimeout bounds waits on built-in controllers (Deployment → Ready
// pods ≈ 3 s measured; generous for a loaded machine).
const rolloutTimeout = 90 * time.Second

func TestAccEnvironment_crdEstablishedAndValidated(t *testing.T) {
	dyn := Dynamic(t)
	ctx := t.Context()
	crds, err := testenv.SandboxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range crds {
		crd := Get(t, ObjectRef{GVR: testenv.CRDGVR, Name: want.GetName()})
		if !hasCondition(crd, "Established", "True") || !hasCondition(crd, "NamesAccepted", "True") {
			t.Errorf("CRD %s is not established: %v", crd.GetName(), crd.Object["status"])
		}
	}

	ns := Namespace(t)
	pools := dyn.Resource(sandboxapi.SandboxWarmPoolGVR).Namespace(ns)
	pool := func(name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": extv1beta1.GroupVersion.String(),
			"kind":       "SandboxWarmPool",
			"metadata":   map[string]any{"name": name},
			"spec":       spec,
		}}
	}

	// The API server, not a client-side check, must refuse these: the
	// status is 422 Invalid and the message names the offending field.
	for _, tc := range []struct {
		name     string
		spec     map[string]any
		wantText []string
	}{
		{
			name:     "negative-replicas",
			spec:     map[string]any{"replicas": int64(-1), "sandboxTemplateRef": map[string]any{"name": "t"}},
			wantText: []string{"spec.replicas", "greater than or equal to 0"},
		},
		{
			name:     "no-template-ref",
			spec:     map[string]any{"replicas": int64(1)},
			wantText: []string{"spec.sandboxTemplateRef", "Required value"},
		},
	} {
		_, err := pools.Create(ctx, pool(RandomName(tc.name), tc.spec), metav1.CreateOptions{})
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			t.Errorf("%s: want a 422 from the API server, got %v", tc.name, err)
			continue
		}
		if code := status.Status().Code; code != 422 || !apierrors.IsInvalid(err) {
			t.Errorf("%s: status %d %s, want 422 Invalid: %v", tc.name, code, status.Status().Reason, err)
		}
		for _, text := range tc.wantText {
			if !strings.Contains(err.Error(), text) {
				t.Errorf("%s: message %q lacks %q", tc.name, err.Error(), text)
			}
		}
	}

	// And a valid object is stored with the schema's defaults applied.
	created, err := pools.Create(ctx, pool(RandomName("valid"), map[string]any{"sandboxTemplateRef": map[string]any{"name": "t"}}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("valid SandboxWarmPool refused: %v", err)
	}
	if replicas, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); replicas != 1 {
		t.Errorf("spec.replicas defaulted to %d, want 1 (the CRD's default)", replicas)
	}
}

func TestAccEnvironment_deploymentRollsOutOnFakeNodes(t *testing.T) {
	cs := Clientset(t)
	ns := Namespace(t)
	t0 := time.Now()
	d := createDeployment(t, cs, ns, RandomName("web"), 2)
	waitDeploymentAvailable(t, cs, ns, d.Name, 2)
	t.Logf("2-replica Deployment Available after %s", time.Since(t0).Round(time.Millisecond))

	pods := podsOf(t, cs, ns, d.Spec.Selector.MatchLabels)
	if len(pods) != 2 {
		t.Fatalf("%d pods, want 2", len(pods))
	}
	for _, p := range pods {
		if !podReady(&p) {
			t.Errorf("pod %s is not Ready: %+v", p.Name, p.Status.Conditions)
		}
		node, err := cs.CoreV1().Nodes().Get(t.Context(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s on node %q: %v", p.Name, p.Spec.NodeName, err)
		}
		if node.Annotations["kwok.x-k8s.io/node"] != "fake" {
			t.Errorf("pod %s runs on %s, which is not a kwok fake node (annotations %v)", p.Name, node.Name, node.Annotations)
		}
		if node.Labels[gvisorNodeLabel] == gvisorNodeValue {
			t.Errorf("pod %s without gVisor landed on the tainted gVisor node %s", p.Name, node.Name)
		}
	}
}

func TestAccEnvironment_gvisorPodLandsOnGVisorPool(t *testing.T) {
	cs := Clientset(t)
	ns := Namespace(t)
	ctx := t.Context()

	rc, err := cs.NodeV1().RuntimeClasses().Get(ctx, gvisorRuntimeClass, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("RuntimeClass %s: %v", gvisorRuntimeClass, err)
	}
	if rc.Scheduling == nil || len(rc.Scheduling.Tolerations) == 0 {
		t.Fatalf("RuntimeClass %s has no scheduling tolerations to merge: %+v", rc.Name, rc.Scheduling)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: RandomName("gvisor")},
		Spec: corev1.PodSpec{
			RuntimeClassName: new(gvisorRuntimeClass),
			Containers:       []corev1.Container{{Name: "c", Image: fakeImage}},
		},
	}
	created, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The RuntimeClass admission plugin merges the class's tolerations and
	// node selector into the pod as it is created; the pod asked for neither.
	for _, want := range rc.Scheduling.Tolerations {
		if !hasToleration(created.Spec.Tolerations, want) {
			t.Errorf("toleration %+v of the RuntimeClass not merged into the pod: %+v", want, created.Spec.Tolerations)
		}
	}
	for k, v := range rc.Scheduling.NodeSelector {
		if created.Spec.NodeSelector[k] != v {
			t.Errorf("node selector %s=%s of the RuntimeClass not merged: %v", k, v, created.Spec.NodeSelector)
		}
	}

	WaitFor(t, rolloutTimeout, "gVisor pod "+pod.Name+" Ready", func(ctx context.Context) (bool, string, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return podReady(p), fmt.Sprintf("node %q, phase %s", p.Spec.NodeName, p.Status.Phase), nil
	})
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels[gvisorNodeLabel] != gvisorNodeValue {
		t.Errorf("gVisor pod scheduled on %s, which is not in the gVisor pool (labels %v)", node.Name, node.Labels)
	}
	tainted := false
	for _, taint := range node.Spec.Taints {
		tainted = tainted || (taint.Key == gvisorNodeLabel && taint.Effect == corev1.TaintEffectNoSchedule)
	}
	if !tainted {
		t.Errorf("gVisor node %s lacks the %s NoSchedule taint: %+v", node.Name, gvisorNodeLabel, node.Spec.Taints)
	}
}

func TestAccEnvironment_garbageCollectsDependants(t *testing.T) {
	cs := Clientset(t)
	ns := Namespace(t)
	ctx := t.Context()
	d := createDeployment(t, cs, ns, RandomName("gc"), 2)
	waitDeploymentAvailable(t, cs, ns, d.Name, 2)

	sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels).String()
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 || !metav1.IsControlledBy(&rss.Items[0], d) {
		t.Fatalf("want one ReplicaSet controlled by the Deployment, got %d", len(rss.Items))
	}

	// Background propagation: the Deployment goes at once and the garbage
	// collector (kube-controller-manager) must remove the rest on its own.
	t0 := time.Now()
	bg := metav1.DeletePropagationBackground
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, rolloutTimeout, "garbage collection of the Deployment's ReplicaSet and pods", func(ctx context.Context) (bool, string, error) {
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, "", err
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, "", err
		}
		return len(rss.Items) == 0 && len(pods.Items) == 0,
			fmt.Sprintf("%d ReplicaSets and %d pods left", len(rss.Items), len(pods.Items)), nil
	})
	t.Logf("dependants collected %s after the owner was deleted", time.Since(t0).Round(time.Millisecond))
}

func TestAccEnvironment_networkPolicyAcceptedAndReadBack(t *testing.T) {
	dyn := Dynamic(t)
	ns := Namespace(t)
	gvr := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	name := RandomName("deny-all")
	// The default-deny form, sent as written in HCL: an explicitly empty
	// egress list. Sent through the dynamic client so the empty list
	// really goes over the wire (typed structs would omit it).
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "NetworkPolicy",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]any{"app": "sandbox"}},
			"policyTypes": []any{"Ingress", "Egress"},
			"ingress": []any{map[string]any{
				"from":  []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "agent-sandbox-system"}}}},
				"ports": []any{map[string]any{"port": int64(8888)}},
			}},
			"egress": []any{},
		},
	}}
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(t.Context(), np, metav1.CreateOptions{}); err != nil {
		t.Fatalf("NetworkPolicy refused: %v", err)
	}
	got := Get(t, ObjectRef{GVR: gvr, Namespace: ns, Name: name})

	types, _, _ := unstructured.NestedStringSlice(got.Object, "spec", "policyTypes")
	if strings.Join(types, ",") != "Ingress,Egress" {
		t.Errorf("policyTypes read back as %v", types)
	}
	ports, _, _ := unstructured.NestedSlice(got.Object, "spec", "ingress")
	if len(ports) != 1 {
		t.Fatalf("ingress read back as %v", got.Object["spec"])
	}
	rule := ports[0].(map[string]any)
	port := rule["ports"].([]any)[0].(map[string]any)
	// The server fills in the default protocol: a field the provider never
	// set, which its Read must not report as drift.
	if port["protocol"] != "TCP" || port["port"] != int64(8888) {
		t.Errorf("ingress port read back as %v, want port 8888 with the defaulted protocol TCP", port)
	}
	// The empty egress list does not survive the round trip: the server
	// stores and returns it as absent. This is the normalisation that made
	// kubernetes_manifest fail with "inconsistent result after apply";
	// resources must model it.
	if egress, found, _ := unstructured.NestedSlice(got.Object, "spec", "egress"); found && len(egress) > 0 {
		t.Errorf("egress read back as %v, want no rules", egress)
	} else {
		t.Logf("empty egress list read back as present=%v", found)
	}
}

// TestAccEnvironment_controllerReconciles proves the harness runs a
// controller for the agent-sandbox API: a Sandbox becomes Ready through a
// pod that the release's controller creates and kwok runs.
func TestAccEnvironment_controllerReconciles(t *testing.T) {
	if os.Getenv(testenv.NoControllerVar) == "1" {
		t.Skipf("%s=1: no controller in this run", testenv.NoControllerVar)
	}
	dyn := Dynamic(t)
	ns := Namespace(t)
	name := RandomName("sbx")
	sbx := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": agentsv1beta1.GroupVersion.String(),
		"kind":       "Sandbox",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"podTemplate": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "agent", "image": fakeImage}},
			}},
		},
	}}
	if _, err := dyn.Resource(sandboxapi.SandboxGVR).Namespace(ns).Create(t.Context(), sbx, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	ref := ObjectRef{GVR: sandboxapi.SandboxGVR, Namespace: ns, Name: name}
	WaitFor(t, rolloutTimeout, "Sandbox "+name+" Ready", func(ctx context.Context) (bool, string, error) {
		obj, err := GetObject(ctx, ref)
		if err != nil {
			return false, "", err
		}
		return hasCondition(obj, "Ready", "True"), fmt.Sprintf("status %v", obj.Object["status"]), nil
	})
	t.Logf("Sandbox Ready %s after creation", time.Since(t0).Round(time.Millisecond))
}

// TestAccHelpers_objectChecks runs the terraform-plugin-testing check
// helpers against a real object, with a hand-made state standing in for
// Terraform's.
func TestAccHelpers_objectChecks(t *testing.T) {
	cs := Clientset(t)
	ns := Namespace(t)
	name := RandomName("cm")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	const address = "fake_config_map.test"
	state := fakeState("fake_config_map", address, ns, name)

	dataIs := func(want string) func(*unstructured.Unstructured) error {
		return func(o *unstructured.Unstructured) error {
			if got, _, _ := unstructured.NestedString(o.Object, "data", "k"); got != want {
				return fmt.Errorf("data.k = %q, want %q", got, want)
			}
			return nil
		}
	}
	if err := CheckExists(address, gvr, dataIs("v"))(state); err != nil {
		t.Errorf("CheckExists: %v", err)
	}
	if err := CheckPatch(address, gvr, "application/merge-patch+json", `{"data":{"k":"drifted"}}`)(state); err != nil {
		t.Fatalf("CheckPatch: %v", err)
	}
	if err := CheckExists(address, gvr, dataIs("drifted"))(state); err != nil {
		t.Errorf("after CheckPatch: %v", err)
	}
	// Short bound: CheckDestroy would otherwise wait GoneTimeout for an
	// object that is not going away.
	if err := checkDestroy("fake_config_map", gvr, 5*time.Second)(state); err == nil || !strings.Contains(err.Error(), "still exists and is not being deleted") {
		t.Errorf("CheckDestroy while the object exists = %v", err)
	}
	if err := CheckDisappears(address, gvr)(state); err != nil {
		t.Fatalf("CheckDisappears: %v", err)
	}
	if err := CheckDestroy("fake_config_map", gvr)(state); err != nil {
		t.Errorf("CheckDestroy after deletion: %v", err)
	}
	if err := CheckExists(address, gvr)(state); err == nil || !apierrors.IsNotFound(err) {
		t.Errorf("CheckExists after deletion = %v, want a NotFound", err)
	}
}

// fakeState is the state Terraform would hold for one namespaced resource of
// type typ that follows the provider's name/namespace convention.
func fakeState(typ, address, ns, name string) *terraform.State {
	s := newState()
	s.RootModule().Resources[address] = &terraform.ResourceState{
		Type: typ,
		Primary: &terraform.InstanceState{
			ID:         ns + "/" + name,
			Attributes: map[string]string{"id": ns + "/" + name, "namespace": ns, "name": name},
		},
	}
	return s
}

func createDeployment(t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) *appsv1.Deployment {
	t.Helper()
	lbls := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: fakeImage}}},
			},
		},
	}
	created, err := cs.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func waitDeploymentAvailable(t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	WaitFor(t, rolloutTimeout, "Deployment "+name+" Available", func(ctx context.Context) (bool, string, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		available := false
		for _, c := range d.Status.Conditions {
			available = available || (c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue)
		}
		return available && d.Status.ReadyReplicas == replicas && d.Status.UpdatedReplicas == replicas,
			fmt.Sprintf("available=%v ready=%d updated=%d", available, d.Status.ReadyReplicas, d.Status.UpdatedReplicas), nil
	})
}

func podsOf(t *testing.T, cs kubernetes.Interface, ns string, sel map[string]string) []corev1.Pod {
	t.Helper()
	list, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasToleration(list []corev1.Toleration, want corev1.Toleration) bool {
	for _, tol := range list {
		if tol.MatchToleration(&want) {
			return true
		}
	}
	return false
}

func hasCondition(obj *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m["status"] == status
		}
	}
	return false
}
