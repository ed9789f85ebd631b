package isolationreport

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func sandboxdSpec(image string, command, args []string) corev1.PodSpec {
	spec := hardenedSpec()
	c := &spec.Containers[0]
	c.Name, c.Image, c.Command, c.Args = "sandboxd", image, command, args
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}
	return spec
}

// sameNamespace admits every pod of the sandbox's namespace, on every port.
func sameNamespace() networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "same-namespace", Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: componentLabels},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
		},
	}
}

// TestSandboxdReport: a sandboxd container is reported with its ports and
// no authentication, and anything but the router reaching either port is
// a violation; loopback and the router-only policy are not.
func TestSandboxdReport(t *testing.T) {
	const title = "sandboxd reachable beyond the router"
	image := "us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main"
	for _, tc := range []struct {
		name      string
		spec      corev1.PodSpec
		policies  []networkingv1.NetworkPolicy
		sandboxd  bool
		beyond    bool
		open      []string // keys of reachable_from that are allowed
		violation bool
	}{
		{name: "no sandboxd", spec: hardenedSpec()},
		{name: "no policy", spec: sandboxdSpec(image, nil, nil), sandboxd: true, beyond: true, violation: true,
			open: []string{"rest_from_same_namespace", "grpc_from_same_namespace", "rest_from_other_namespaces", "grpc_from_other_namespaces", "rest_from_internet", "grpc_from_internet"}},
		{name: "only the router on 8888", spec: sandboxdSpec(image, nil, nil), policies: []networkingv1.NetworkPolicy{isolation()}, sandboxd: true},
		{name: "the namespace on every port", spec: sandboxdSpec(image, nil, nil), policies: []networkingv1.NetworkPolicy{isolation(), sameNamespace()},
			sandboxd: true, beyond: true, violation: true, open: []string{"rest_from_same_namespace", "grpc_from_same_namespace"}},
		{name: "loopback only, no policy", spec: sandboxdSpec("node:22-slim", []string{"/sandboxd-bin/sandboxd"}, []string{"--listen-host=127.0.0.1"}), sandboxd: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyze(newInventory(tc.policies, tc.spec), nil)
			s := r.Sandboxes[0]
			if (len(s.Sandboxd) == 1) != tc.sandboxd || len(s.Sandboxd) > 1 {
				t.Fatalf("sandboxd = %+v", s.Sandboxd)
			}
			violated := false
			for _, v := range s.Violations {
				if v.Title == title {
					violated = true
					if v.Attribute != "network_policy" || !strings.Contains(v.Message, "no authentication") {
						t.Errorf("violation %+v", v)
					}
				}
			}
			if violated != tc.violation {
				t.Errorf("violation %v, want %v (%+v)", violated, tc.violation, s.Violations)
			}
			if !tc.sandboxd {
				return
			}
			d := s.Sandboxd[0]
			if d.Container != "sandboxd" || d.RESTPort != 8080 || d.GRPCPort != 9090 || d.Authentication != "none" || d.ReachableBeyondRouter != tc.beyond {
				t.Errorf("sandboxd = %+v", d)
			}
			if len(d.ReachableFrom) != 6 {
				t.Errorf("reachable_from has %d entries, want 6: %v", len(d.ReachableFrom), d.ReachableFrom)
			}
			for k, v := range d.ReachableFrom {
				want := verdictDenied
				for _, o := range tc.open {
					if o == k {
						want = verdictAllowed
					}
				}
				if v.Verdict != want {
					t.Errorf("%s = %s (%s), want %s", k, v.Verdict, v.Reason, want)
				}
			}
		})
	}
}
