package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The cluster imitates a GKE cluster with a gVisor node pool: the same node
// pool label, and on the gVisor pool the label and taint GKE puts there
// itself. What runs is not gVisor (kwok runs nothing): nodeInfo names kwok as
// the container runtime so nobody mistakes the nodes for real ones.
const (
	NodePoolLabel        = "cloud.google.com/gke-nodepool"
	SystemPool           = "system-pool"
	GVisorPool           = "gvisor-pool"
	SandboxRuntimeKey    = "sandbox.gke.io/runtime"
	SandboxRuntimeGVisor = "gvisor"
	RuntimeClassGVisor   = "gvisor"
	RuntimeHandlerGVisor = "runsc"
)

// kwokVersion is the kwok release linked into the binary; it is shown as
// the nodes' container runtime.
const kwokVersion = "v0.8.0"

// NodeNames returns the names of the fake nodes for the options, system
// pool first.
func NodeNames(o Options) []string {
	var names []string
	for i := range o.SystemNodes {
		names = append(names, fmt.Sprintf("%s-%d", SystemPool, i))
	}
	for i := range o.GVisorNodes {
		names = append(names, fmt.Sprintf("%s-%d", GVisorPool, i))
	}
	return names
}

// gvisorRuntimeClass steers pods that ask for gVisor onto the gVisor pool and
// lets them tolerate its taint, as GKE's own gvisor RuntimeClass does (the
// RuntimeClass admission plugin merges both into the pod).
func gvisorRuntimeClass() *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: RuntimeClassGVisor},
		Handler:    RuntimeHandlerGVisor,
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{SandboxRuntimeKey: SandboxRuntimeGVisor},
			Tolerations: []corev1.Toleration{{
				Key:      SandboxRuntimeKey,
				Operator: corev1.TolerationOpEqual,
				Value:    SandboxRuntimeGVisor,
				Effect:   corev1.TaintEffectNoSchedule,
			}},
		},
	}
}

// fakeNode builds node number index (counting across pools). The API server
// keeps a Node's status on create, so capacity, addresses and nodeInfo are
// set here and kwok only has to flip the conditions to Ready.
func fakeNode(o Options, name string, index int) (*corev1.Node, error) {
	pool := SystemPool
	if strings.HasPrefix(name, GVisorPool) {
		pool = GVisorPool
	}
	cpu, err := resource.ParseQuantity(o.NodeCPU)
	if err != nil {
		return nil, fmt.Errorf("node CPU %q: %w", o.NodeCPU, err)
	}
	mem, err := resource.ParseQuantity(o.NodeMemory)
	if err != nil {
		return nil, fmt.Errorf("node memory %q: %w", o.NodeMemory, err)
	}
	podCIDR, err := nodePodCIDR(o.PodCIDR, index)
	if err != nil {
		return nil, err
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              cpu,
		corev1.ResourceMemory:           mem,
		corev1.ResourcePods:             *resource.NewQuantity(int64(o.NodePods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				NodePoolLabel:            pool,
				// kwok's conventional label for its nodes, handy in selectors.
				"type": "kwok",
			},
			Annotations: map[string]string{
				FakeNodeAnnotation:             FakeNodeAnnotationValue,
				"node.alpha.kubernetes.io/ttl": "0",
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:  podCIDR,
			PodCIDRs: []string{podCIDR},
		},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
			// Loopback addresses on purpose: anything that tries to reach a
			// "kubelet" on a fake node stays on this machine.
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("127.0.1.%d", index+1)},
				{Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:            "amd64",
				OperatingSystem:         "linux",
				OSImage:                 "localcluster fake node (kwok)",
				KubeletVersion:          KubernetesVersion,
				ContainerRuntimeVersion: "kwok://" + kwokVersion,
				KernelVersion:           "kwok",
			},
		},
	}
	if pool == GVisorPool {
		n.Labels[SandboxRuntimeKey] = SandboxRuntimeGVisor
		n.Spec.Taints = []corev1.Taint{{
			Key:    SandboxRuntimeKey,
			Value:  SandboxRuntimeGVisor,
			Effect: corev1.TaintEffectNoSchedule,
		}}
	}
	return n, nil
}

// CreateContents creates the RuntimeClass and the fake nodes. Objects that
// already exist are left as they are, so it can be retried.
func CreateContents(ctx context.Context, cs kubernetes.Interface, o Options) error {
	_, err := cs.NodeV1().RuntimeClasses().Create(ctx, gvisorRuntimeClass(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RuntimeClass %s: %w", RuntimeClassGVisor, err)
	}
	for i, name := range NodeNames(o) {
		n, err := fakeNode(o, name, i)
		if err != nil {
			return err
		}
		_, err = cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	if o.RealNode != nil {
		return createNetworkPoliciesRBAC(ctx, cs)
	}
	return nil
}

// createNetworkPoliciesRBAC lets the NetworkPolicy enforcer (kube-router)
// read what it needs, nothing more: pods, namespaces and policies to
// enforce, its node's address, and the services, endpoints and endpoint
// slices whose informers kube-router starts whatever controllers run.
func createNetworkPoliciesRBAC(ctx context.Context, cs kubernetes.Interface) error {
	const name = "localcluster:netpol"
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "namespaces", "nodes", "services", "endpoints"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: NetworkPoliciesUser}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}

// nodesSchedulable reports which of the expected nodes are not yet Ready or
// still carry the not-ready taint. New nodes get that taint at admission;
// the node lifecycle controller removes it once the node is Ready, so its
// absence also proves the controller manager works.
func nodesSchedulable(ctx context.Context, cs kubernetes.Interface, names []string) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	byName := map[string]*corev1.Node{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var waiting []string
	for _, name := range names {
		n := byName[name]
		switch {
		case n == nil:
			waiting = append(waiting, name+" (missing)")
		case !nodeReady(n):
			waiting = append(waiting, name+" (not Ready)")
		case hasTaint(n, corev1.TaintNodeNotReady):
			waiting = append(waiting, name+" (not-ready taint)")
		}
	}
	sort.Strings(waiting)
	return waiting, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
