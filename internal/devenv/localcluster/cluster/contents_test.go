package cluster

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestNodeNames(t *testing.T) {
	o := DefaultOptions()
	o.SystemNodes, o.GVisorNodes = 1, 3
	want := []string{"system-pool-0", "gvisor-pool-0", "gvisor-pool-1", "gvisor-pool-2"}
	if got := NodeNames(o); !slices.Equal(got, want) {
		t.Errorf("NodeNames = %v, want %v", got, want)
	}
}

func TestCreateContents(t *testing.T) {
	cs := fake.NewSimpleClientset()
	o := DefaultOptions()
	ctx := context.Background()
	if err := CreateContents(ctx, cs, o); err != nil {
		t.Fatal(err)
	}
	// Idempotent: a retry after a partial failure must not fail.
	if err := CreateContents(ctx, cs, o); err != nil {
		t.Fatalf("second call: %v", err)
	}

	rc, err := cs.NodeV1().RuntimeClasses().Get(ctx, "gvisor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Handler != "runsc" || rc.Scheduling == nil ||
		rc.Scheduling.NodeSelector["sandbox.gke.io/runtime"] != "gvisor" ||
		len(rc.Scheduling.Tolerations) != 1 ||
		rc.Scheduling.Tolerations[0] != (corev1.Toleration{Key: "sandbox.gke.io/runtime", Operator: "Equal", Value: "gvisor", Effect: "NoSchedule"}) {
		t.Errorf("unexpected RuntimeClass %+v", rc)
	}

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 4 {
		t.Fatalf("%d nodes, want 4", len(nodes.Items))
	}
	cidrs := map[string]bool{}
	ips := map[string]bool{}
	for _, n := range nodes.Items {
		gvisor := n.Labels["cloud.google.com/gke-nodepool"] == "gvisor-pool"
		if !gvisor && n.Labels["cloud.google.com/gke-nodepool"] != "system-pool" {
			t.Errorf("%s: pool label %q", n.Name, n.Labels["cloud.google.com/gke-nodepool"])
		}
		if n.Annotations["kwok.x-k8s.io/node"] != "fake" {
			t.Errorf("%s: not annotated for kwok", n.Name)
		}
		if gvisor != (n.Labels["sandbox.gke.io/runtime"] == "gvisor") {
			t.Errorf("%s: runtime label %q", n.Name, n.Labels["sandbox.gke.io/runtime"])
		}
		wantTaints := 0
		if gvisor {
			wantTaints = 1
		}
		if len(n.Spec.Taints) != wantTaints || (gvisor && n.Spec.Taints[0] != corev1.Taint{Key: "sandbox.gke.io/runtime", Value: "gvisor", Effect: "NoSchedule"}) {
			t.Errorf("%s: taints %v", n.Name, n.Spec.Taints)
		}
		if q := n.Status.Allocatable[corev1.ResourcePods]; q.Value() != 110 {
			t.Errorf("%s: allocatable pods %v", n.Name, q.String())
		}
		if q := n.Status.Allocatable[corev1.ResourceCPU]; q.Value() != 32 {
			t.Errorf("%s: allocatable cpu %v", n.Name, q.String())
		}
		if cidrs[n.Spec.PodCIDR] {
			t.Errorf("%s: pod CIDR %s shared", n.Name, n.Spec.PodCIDR)
		}
		cidrs[n.Spec.PodCIDR] = true
		ip := n.Status.Addresses[0].Address
		if ips[ip] || ip[:4] != "127." {
			t.Errorf("%s: InternalIP %s must be unique and loopback", n.Name, ip)
		}
		ips[ip] = true
	}
}

func TestNodesSchedulable(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	cs := fake.NewSimpleClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "c"},
			Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}},
	)
	waiting, err := nodesSchedulable(context.Background(), cs, []string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"b (not Ready)", "c (not-ready taint)", "d (missing)"}
	if !slices.Equal(waiting, want) {
		t.Errorf("waiting = %v, want %v", waiting, want)
	}
}
