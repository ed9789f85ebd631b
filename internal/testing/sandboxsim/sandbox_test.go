package sandboxsim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
)

// Generous bounds: the local control plane shares two cores with the tests.
const (
	readyTimeout = 60 * time.Second
	shortWait    = 30 * time.Second
)

func testPodSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name:  "main",
		Image: "registry.invalid/sandbox:test", // never pulled: kwok runs nothing
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8888}},
	}}}
}

func newSandbox(ns, name string) *agentsv1beta1.Sandbox {
	return &agentsv1beta1.Sandbox{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1beta1.SandboxSpec{SandboxBlueprint: agentsv1beta1.SandboxBlueprint{
			PodTemplate: agentsv1beta1.PodTemplate{Spec: testPodSpec()},
		}},
	}
}

func cond(conds []metav1.Condition, t agentsv1beta1.ConditionType) *metav1.Condition {
	return meta.FindStatusCondition(conds, t.String())
}

// waitSandbox polls the sandbox until pred holds and returns it.
func (e *testEnv) waitSandbox(t *testing.T, ns, name string, timeout time.Duration, what string, pred func(*agentsv1beta1.Sandbox) (bool, string)) *agentsv1beta1.Sandbox {
	t.Helper()
	sb := &agentsv1beta1.Sandbox{}
	eventually(t, timeout, what, func() (bool, string) {
		if !e.get(t, ns, name, sb) {
			return false, "sandbox not found"
		}
		return pred(sb)
	})
	return sb
}

// readyAtGeneration holds once Ready has the wanted status and reason for the
// sandbox's current generation, i.e. the controller has seen the latest spec.
func readyAtGeneration(status metav1.ConditionStatus, reason string) func(*agentsv1beta1.Sandbox) (bool, string) {
	return func(sb *agentsv1beta1.Sandbox) (bool, string) {
		c := cond(sb.Status.Conditions, agentsv1beta1.ConditionReady)
		if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != sb.Generation {
			return false, fmt.Sprintf("generation %d, conditions %s", sb.Generation, describeConditions(sb.Status.Conditions))
		}
		return true, ""
	}
}

func TestSandbox_PodServiceAndStatus(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)
	hash := sandboxapi.NameHash("box")

	sb := newSandbox(ns, "box")
	sb.Spec.Service = ptr.To(true)
	sb.Spec.PodTemplate.Metadata = agentsv1beta1.PodMetadata{
		// The reserved key must never reach the pod: it would let a tenant
		// forge controller-owned identity.
		Labels:      map[string]string{"team": "a", sandboxapi.LabelClaimUID: "forged"},
		Annotations: map[string]string{"note": "x"},
	}
	start := time.Now()
	e.create(t, sb)
	sb = e.waitSandbox(t, ns, "box", readyTimeout, "sandbox Ready", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))
	t.Logf("sandbox Ready %.2fs after create", time.Since(start).Seconds())

	pod := &corev1.Pod{}
	if !e.get(t, ns, "box", pod) {
		t.Fatal("pod box not found")
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "Sandbox" || ref.Name != "box" || ref.UID != sb.UID {
		t.Errorf("pod controller = %+v, want the sandbox", ref)
	}
	for k, v := range map[string]string{"team": "a", sandboxapi.LabelSandboxNameHash: hash, LabelManagedBy: ManagedByValue} {
		if pod.Labels[k] != v {
			t.Errorf("pod label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if _, ok := pod.Labels[sandboxapi.LabelClaimUID]; ok {
		t.Errorf("reserved label %s was copied from the pod template", sandboxapi.LabelClaimUID)
	}
	if pod.Annotations["note"] != "x" || pod.Annotations[sandboxapi.AnnotationPropagatedLabels] != "team" ||
		pod.Annotations[sandboxapi.AnnotationPropagatedAnnotations] != "note" {
		t.Errorf("pod annotations = %v", pod.Annotations)
	}
	if sb.Annotations[sandboxapi.AnnotationPodName] != "box" {
		t.Errorf("sandbox pod-name annotation = %q", sb.Annotations[sandboxapi.AnnotationPodName])
	}

	svc := &corev1.Service{}
	if !e.get(t, ns, "box", svc) {
		t.Fatal("service box not found")
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.Selector) != 1 || svc.Spec.Selector[sandboxapi.LabelSandboxNameHash] != hash {
		t.Errorf("service is not headless with the name-hash selector: clusterIP %q selector %v", svc.Spec.ClusterIP, svc.Spec.Selector)
	}
	if !metav1.IsControlledBy(svc, sb) {
		t.Errorf("service is not controlled by the sandbox: %v", svc.OwnerReferences)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http" || svc.Spec.Ports[0].Port != 8888 {
		t.Errorf("service ports = %+v, want http/8888", svc.Spec.Ports)
	}

	st := sb.Status
	if want := "box." + ns + ".svc.cluster.local"; st.ServiceFQDN != want || st.Service != "box" {
		t.Errorf("status service %q fqdn %q, want box and %s", st.Service, st.ServiceFQDN, want)
	}
	if want := sandboxapi.LabelSandboxNameHash + "=" + hash; st.Selector != want {
		t.Errorf("status selector %q, want %q", st.Selector, want)
	}
	if len(st.PodIPs) == 0 || !slices.Equal(st.PodIPs, podIPs(pod)) || st.NodeName == "" || st.NodeName != pod.Spec.NodeName {
		t.Errorf("status podIPs %v nodeName %q; pod has %v on %q", st.PodIPs, st.NodeName, podIPs(pod), pod.Spec.NodeName)
	}
	if c := cond(st.Conditions, agentsv1beta1.ConditionPodScheduled); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("PodScheduled = %+v, want True", c)
	}
	if c := cond(st.Conditions, agentsv1beta1.ConditionSuspended); c == nil || c.Status != metav1.ConditionFalse || c.Reason != agentsv1beta1.ReasonNotSuspended {
		t.Errorf("Suspended = %+v, want False/NotSuspended", c)
	}

	t.Run("template metadata follows the sandbox", func(t *testing.T) {
		e.update(t, sb, func() {
			sb.Spec.PodTemplate.Metadata.Labels["team"] = "b"
			sb.Spec.PodTemplate.Metadata.Annotations = nil
		})
		eventually(t, shortWait, "pod metadata updated", func() (bool, string) {
			e.get(t, ns, "box", pod)
			_, noteLeft := pod.Annotations["note"]
			return pod.Labels["team"] == "b" && !noteLeft, fmt.Sprintf("labels %v annotations %v", pod.Labels, pod.Annotations)
		})
	})

	t.Run("service false deletes it", func(t *testing.T) {
		e.update(t, sb, func() { sb.Spec.Service = ptr.To(false) })
		eventually(t, shortWait, "service deleted", func() (bool, string) {
			return e.gone(t, ns, "box", &corev1.Service{}), "service still there"
		})
		sb = e.waitSandbox(t, ns, "box", shortWait, "status without service", func(sb *agentsv1beta1.Sandbox) (bool, string) {
			ok, why := readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)(sb)
			return ok && sb.Status.Service == "" && sb.Status.ServiceFQDN == "", why + " service=" + sb.Status.Service
		})
	})

	t.Run("service unset keeps an existing one", func(t *testing.T) {
		e.update(t, sb, func() { sb.Spec.Service = ptr.To(true) })
		e.waitSandbox(t, ns, "box", shortWait, "service recreated", func(sb *agentsv1beta1.Sandbox) (bool, string) {
			ok, why := readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady)(sb)
			return ok && sb.Status.Service == "box", why
		})
		e.update(t, sb, func() { sb.Spec.Service = nil })
		sb = e.waitSandbox(t, ns, "box", shortWait, "spec without service observed", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))
		if e.gone(t, ns, "box", &corev1.Service{}) {
			t.Error("service was deleted although spec.service is unset")
		}
		if sb.Status.Service != "box" {
			t.Errorf("status.service = %q, want box (an existing service still counts)", sb.Status.Service)
		}
	})
}

func TestSandbox_SuspendAndResume(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	e.create(t, newSandbox(ns, "sleepy"))
	sb := e.waitSandbox(t, ns, "sleepy", readyTimeout, "sandbox Ready", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))
	pod := &corev1.Pod{}
	e.get(t, ns, "sleepy", pod)
	firstUID := pod.UID

	e.update(t, sb, func() { sb.Spec.OperatingMode = agentsv1beta1.OperatingModeSuspended })
	start := time.Now()
	sb = e.waitSandbox(t, ns, "sleepy", shortWait, "sandbox suspended", func(sb *agentsv1beta1.Sandbox) (bool, string) {
		c := cond(sb.Status.Conditions, agentsv1beta1.ConditionSuspended)
		ok, why := readyAtGeneration(metav1.ConditionFalse, agentsv1beta1.ReasonSandboxSuspended)(sb)
		return ok && c != nil && c.Status == metav1.ConditionTrue && c.Reason == agentsv1beta1.ReasonPodTerminated, why
	})
	t.Logf("suspended (pod gone) %.2fs after the spec change", time.Since(start).Seconds())
	if !e.gone(t, ns, "sleepy", &corev1.Pod{}) {
		t.Error("pod still exists while Suspended=True")
	}
	if len(sb.Status.PodIPs) != 0 || sb.Status.NodeName != "" {
		t.Errorf("suspended sandbox still reports podIPs %v node %q", sb.Status.PodIPs, sb.Status.NodeName)
	}
	if c := cond(sb.Status.Conditions, agentsv1beta1.ConditionPodScheduled); c != nil {
		t.Errorf("PodScheduled present without a pod: %+v", c)
	}

	e.update(t, sb, func() { sb.Spec.OperatingMode = agentsv1beta1.OperatingModeRunning })
	start = time.Now()
	sb = e.waitSandbox(t, ns, "sleepy", readyTimeout, "sandbox resumed", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))
	t.Logf("Ready again %.2fs after resuming", time.Since(start).Seconds())
	if !e.get(t, ns, "sleepy", pod) || pod.UID == firstUID {
		t.Errorf("resume did not create a new pod (uid %s, first %s)", pod.UID, firstUID)
	}
	if c := cond(sb.Status.Conditions, agentsv1beta1.ConditionSuspended); c == nil || c.Status != metav1.ConditionFalse || c.Reason != agentsv1beta1.ReasonNotSuspended {
		t.Errorf("Suspended after resume = %+v", c)
	}
}

func TestSandbox_VolumeClaimTemplates(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	sb := newSandbox(ns, "disk")
	// A template volume of the same name is replaced by the claim.
	sb.Spec.PodTemplate.Spec.Volumes = []corev1.Volume{{Name: "workspace", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	sb.Spec.VolumeClaimTemplates = []agentsv1beta1.PersistentVolumeClaimTemplate{{
		Metadata: agentsv1beta1.EmbeddedObjectMetadata{Name: "workspace", Labels: map[string]string{"tier": "scratch"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}}
	e.create(t, sb)

	pvc := &corev1.PersistentVolumeClaim{}
	eventually(t, shortWait, "PVC created", func() (bool, string) { return e.get(t, ns, "workspace-disk", pvc), "no PVC workspace-disk" })
	e.get(t, ns, "disk", sb)
	if !metav1.IsControlledBy(pvc, sb) {
		t.Errorf("PVC not controlled by the sandbox: %v", pvc.OwnerReferences)
	}
	if pvc.Labels["tier"] != "scratch" || pvc.Labels[sandboxapi.LabelSandboxNameHash] != sandboxapi.NameHash("disk") {
		t.Errorf("PVC labels = %v", pvc.Labels)
	}

	pod := &corev1.Pod{}
	eventually(t, shortWait, "pod created", func() (bool, string) { return e.get(t, ns, "disk", pod), "no pod" })
	var workspace []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.Name == "workspace" {
			workspace = append(workspace, v)
		}
	}
	if len(workspace) != 1 || workspace[0].PersistentVolumeClaim == nil || workspace[0].PersistentVolumeClaim.ClaimName != "workspace-disk" {
		t.Errorf("pod volumes named workspace = %+v, want one, on PVC workspace-disk", workspace)
	}

	// No storage provisioner runs here, so the claim stays unbound and the pod
	// unschedulable; the sandbox must mirror the pod's own PodScheduled.
	e.waitSandbox(t, ns, "disk", shortWait, "PodScheduled mirrored", func(sb *agentsv1beta1.Sandbox) (bool, string) {
		e.get(t, ns, "disk", pod)
		var podCond *corev1.PodCondition
		for i := range pod.Status.Conditions {
			if pod.Status.Conditions[i].Type == corev1.PodScheduled {
				podCond = &pod.Status.Conditions[i]
			}
		}
		c := cond(sb.Status.Conditions, agentsv1beta1.ConditionPodScheduled)
		if podCond == nil || c == nil {
			return false, fmt.Sprintf("pod condition %+v, sandbox conditions %s", podCond, describeConditions(sb.Status.Conditions))
		}
		wantReason := podCond.Reason
		if wantReason == "" {
			wantReason = agentsv1beta1.ReasonPodScheduled
		}
		return string(c.Status) == string(podCond.Status) && c.Reason == wantReason,
			fmt.Sprintf("pod %s/%s, sandbox %s/%s", podCond.Status, podCond.Reason, c.Status, c.Reason)
	})

	e.update(t, sb, func() { sb.Spec.OperatingMode = agentsv1beta1.OperatingModeSuspended })
	e.waitSandbox(t, ns, "disk", shortWait, "suspended", func(sb *agentsv1beta1.Sandbox) (bool, string) {
		c := cond(sb.Status.Conditions, agentsv1beta1.ConditionSuspended)
		return c != nil && c.Status == metav1.ConditionTrue, describeConditions(sb.Status.Conditions)
	})
	if e.gone(t, ns, "workspace-disk", &corev1.PersistentVolumeClaim{}) {
		t.Error("suspending deleted the PVC; it must be kept")
	}
}

func TestSandbox_ShutdownTime(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	ns := e.namespace(t)

	for _, policy := range []agentsv1beta1.ShutdownPolicy{agentsv1beta1.ShutdownPolicyRetain, agentsv1beta1.ShutdownPolicyDelete} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			name := "expiring-" + strings.ToLower(string(policy))
			sb := newSandbox(ns, name)
			sb.Spec.Service = ptr.To(true)
			// The API keeps whole seconds, so measure from what it stores.
			shutdown := time.Now().Add(5 * time.Second).Truncate(time.Second)
			sb.Spec.ShutdownTime = &metav1.Time{Time: shutdown}
			sb.Spec.ShutdownPolicy = ptr.To(policy)
			e.create(t, sb)
			e.waitSandbox(t, ns, name, readyTimeout, "Ready before expiry", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))

			if policy == agentsv1beta1.ShutdownPolicyDelete {
				eventually(t, shortWait, "sandbox deleted on expiry", func() (bool, string) {
					return e.gone(t, ns, name, &agentsv1beta1.Sandbox{}), "sandbox still exists"
				})
				t.Logf("sandbox deleted %.2fs after its shutdownTime", time.Since(shutdown).Seconds())
				return
			}
			sb = e.waitSandbox(t, ns, name, shortWait, "sandbox expired", readyAtGeneration(metav1.ConditionFalse, agentsv1beta1.ReasonSandboxExpired))
			t.Logf("Ready=False/SandboxExpired %.2fs after shutdownTime", time.Since(shutdown).Seconds())
			eventually(t, shortWait, "pod and service removed", func() (bool, string) {
				return e.gone(t, ns, name, &corev1.Pod{}) && e.gone(t, ns, name, &corev1.Service{}), "pod or service still there"
			})
			if len(sb.Status.PodIPs) != 0 || sb.Status.NodeName != "" || sb.Status.ServiceFQDN != "" {
				t.Errorf("expired sandbox keeps live status: %+v", sb.Status)
			}
			if cond(sb.Status.Conditions, agentsv1beta1.ConditionPodScheduled) != nil {
				t.Error("expired sandbox keeps PodScheduled")
			}
		})
	}
}

func TestSandbox_GVisorRuntimeClass(t *testing.T) {
	t.Parallel()
	e := requireCluster(t)
	rc := &nodev1.RuntimeClass{}
	if !e.get(t, "", "gvisor", rc) {
		t.Skip("the cluster has no gvisor RuntimeClass")
	}
	ns := e.namespace(t)
	sb := newSandbox(ns, "isolated")
	sb.Spec.PodTemplate.Spec.RuntimeClassName = ptr.To("gvisor")
	e.create(t, sb)
	sb = e.waitSandbox(t, ns, "isolated", readyTimeout, "gVisor sandbox Ready", readyAtGeneration(metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady))

	node := &corev1.Node{}
	if !e.get(t, "", sb.Status.NodeName, node) {
		t.Fatalf("node %q not found", sb.Status.NodeName)
	}
	if rc.Scheduling != nil {
		for k, v := range rc.Scheduling.NodeSelector {
			if node.Labels[k] != v {
				t.Errorf("gVisor pod landed on %s, which lacks %s=%s", node.Name, k, v)
			}
		}
	}
}
