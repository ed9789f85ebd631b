// Package e2e starts a real localcluster and checks, with client-go, that it
// behaves like a small GKE cluster with a gVisor pool. It needs the
// localcluster binary (built by ../build.sh, ~10 min cold) and is skipped
// unless LOCALCLUSTER_E2E=1. LOCALCLUSTER_BIN points at a prebuilt binary.
package selftest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

func binary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("LOCALCLUSTER_BIN"); bin != "" {
		return bin
	}
	t0 := time.Now()
	cmd := exec.Command("bash", "../build.sh")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("build.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	bin := lines[len(lines)-1]
	t.Logf("binary %s (build.sh took %s)", bin, time.Since(t0).Round(time.Millisecond))
	return bin
}

// clusterPids returns the pids recorded in the cluster's run directory.
func clusterPids(t *testing.T, dir string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

// processesMentioning lists live processes whose command line contains s.
func processesMentioning(s string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue // exited, waiting to be reaped: not running
		}
		found = append(found, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return found
}

// memory returns RSS and PSS (proportional share: the multi-call binary's
// text pages are shared by all processes, so RSS double counts them) in MiB.
func memory(pid int) (rss, pss int) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.Atoi(fields[1])
		switch fields[0] {
		case "Rss:":
			rss = kb / 1024
		case "Pss:":
			pss = kb / 1024
		}
	}
	return rss, pss
}

func TestLocalCluster(t *testing.T) {
	if os.Getenv("LOCALCLUSTER_E2E") != "1" {
		t.Skip("set LOCALCLUSTER_E2E=1 to start a real control plane (needs the localcluster binary; see build.sh)")
	}
	bin := binary(t)
	dir := t.TempDir()

	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Stderr = &stderr
		err := cmd.Run()
		t.Logf("localcluster %s:\n%s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
		return stdout.String(), err
	}

	t0 := time.Now()
	out, err := run("up", "--dir", dir, "--timeout", "180s")
	upTime := time.Since(t0)
	downDone := false
	t.Cleanup(func() {
		if !downDone {
			_, _ = run("down", "--dir", dir)
		}
	})
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	kubeconfig := lines[len(lines)-1]
	if kubeconfig != filepath.Join(dir, "kubeconfig") {
		t.Fatalf("up printed %q as its last line, want the kubeconfig path", kubeconfig)
	}
	t.Logf("up: %s", upTime.Round(time.Millisecond))

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// `up` twice is harmless and reports the same kubeconfig.
	if out, err := run("up", "--dir", dir); err != nil || strings.TrimSpace(out) != kubeconfig {
		t.Errorf("second up: %q, %v", out, err)
	}
	if _, err := run("status", "--dir", dir); err != nil {
		t.Errorf("status of a running cluster: %v", err)
	}

	t.Run("version", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != "v1.37.2" {
			t.Errorf("server version %q, want v1.37.2", v.GitVersion)
		}
	})

	podCIDRs := map[string]netip.Prefix{}
	t.Run("nodes", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pools := map[string]int{}
		for _, n := range nodes.Items {
			ready := false
			for _, c := range n.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready {
				t.Errorf("node %s not Ready", n.Name)
			}
			pools[n.Labels["cloud.google.com/gke-nodepool"]]++
			podCIDRs[n.Name] = netip.MustParsePrefix(n.Spec.PodCIDR)
		}
		if pools["system-pool"] != 2 || pools["gvisor-pool"] != 2 {
			t.Errorf("node pools %v, want 2 system-pool and 2 gvisor-pool nodes", pools)
		}
	})

	ns := "e2e"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods in a fresh namespace need its default ServiceAccount, created
	// asynchronously by the controller manager.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("default service account in %s: %v", ns, err)
	}

	t.Run("deployment becomes available on kwok nodes", func(t *testing.T) {
		t0 := time.Now()
		dep := deployment("web", 2, nil)
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAvailable(ctx, t, cs, ns, "web", 2)
		t.Logf("2-replica Deployment Available after %s", time.Since(t0).Round(time.Millisecond))
		pods := podsOf(ctx, t, cs, ns, "web")
		if len(pods) != 2 {
			t.Fatalf("%d pods, want 2", len(pods))
		}
		for _, p := range pods {
			if !strings.HasPrefix(p.Spec.NodeName, "system-pool-") {
				t.Errorf("pod %s on %q, want a system-pool node (the gVisor pool is tainted)", p.Name, p.Spec.NodeName)
			}
			if !podReady(&p) {
				t.Errorf("pod %s not Ready", p.Name)
			}
			if len(p.Status.PodIPs) != 1 {
				t.Errorf("pod %s podIPs %v", p.Name, p.Status.PodIPs)
				continue
			}
			ip, err := netip.ParseAddr(p.Status.PodIPs[0].IP)
			if err != nil || !podCIDRs[p.Spec.NodeName].Contains(ip) {
				t.Errorf("pod %s IP %q outside its node's pod CIDR %v", p.Name, p.Status.PodIPs[0].IP, podCIDRs[p.Spec.NodeName])
			}
		}
	})

	t.Run("service endpoints carry pod IPs", func(t *testing.T) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{
				ClusterIP: corev1.ClusterIPNone, // headless, as agent-sandbox creates
				Selector:  map[string]string{"app": "web"},
				Ports:     []corev1.ServicePort{{Name: "http", Port: 80}},
			},
		}
		if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
			if err != nil {
				return false, err
			}
			ready := 0
			for _, s := range slices.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						ready++
					}
				}
			}
			return ready == 2, nil
		})
		if err != nil {
			t.Errorf("EndpointSlice with 2 ready endpoints: %v", err)
		}
	})

	t.Run("gvisor pods land on the gvisor pool only", func(t *testing.T) {
		dep := deployment("sandboxed", 6, ptr.To("gvisor"))
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAvailable(ctx, t, cs, ns, "sandboxed", 6)
		for _, p := range podsOf(ctx, t, cs, ns, "sandboxed") {
			if !strings.HasPrefix(p.Spec.NodeName, "gvisor-pool-") {
				t.Errorf("gVisor pod %s landed on %q", p.Name, p.Spec.NodeName)
			}
			// The RuntimeClass admission plugin merged the class's
			// scheduling constraints into the pod.
			if p.Spec.NodeSelector["sandbox.gke.io/runtime"] != "gvisor" {
				t.Errorf("pod %s nodeSelector %v", p.Name, p.Spec.NodeSelector)
			}
		}
		// A bare pod too, the way a Sandbox's pod is created.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "bare-sandbox"},
			Spec: corev1.PodSpec{
				RuntimeClassName: ptr.To("gvisor"),
				Containers:       []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var got *corev1.Pod
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err = cs.CoreV1().Pods(ns).Get(ctx, "bare-sandbox", metav1.GetOptions{})
			return err == nil && podReady(got), nil
		})
		if err != nil {
			t.Fatalf("bare gVisor pod not Ready: %v (%+v)", err, got.Status)
		}
		if !strings.HasPrefix(got.Spec.NodeName, "gvisor-pool-") || got.Status.PodIP == "" {
			t.Errorf("bare gVisor pod on %q with IP %q", got.Spec.NodeName, got.Status.PodIP)
		}
	})

	t.Run("lifecycle annotations", func(t *testing.T) {
		mk := func(name string, ann map[string]string) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
			}
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		mk("slow", map[string]string{"localcluster.agentsandbox.dev/ready-delay": "2s"})
		mk("stuck", map[string]string{"localcluster.agentsandbox.dev/never-ready": "true"})
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{})
			return err == nil && podReady(p), nil
		})
		if err != nil {
			t.Fatalf("slow pod never Ready: %v", err)
		}
		if d := time.Since(t0); d < 2*time.Second {
			t.Errorf("slow pod Ready after %s, want at least 2s", d)
		}
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "stuck", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if podReady(p) || p.Status.PodIP != "" || p.Spec.NodeName == "" {
			t.Errorf("stuck pod: node %q, IP %q, ready %v; want bound, no IP, not ready", p.Spec.NodeName, p.Status.PodIP, podReady(p))
		}
		// Deleting works for stuck pods too.
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "stuck", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Pods(ns).Get(ctx, "stuck", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("stuck pod not deleted: %v", err)
		}
	})

	t.Run("network policy accepted", func(t *testing.T) {
		np := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "default-deny"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "sandboxed"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
				Ingress:     []networkingv1.NetworkPolicyIngressRule{},
				Egress:      []networkingv1.NetworkPolicyEgressRule{},
			},
		}
		if _, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, np, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, "default-deny", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.PolicyTypes) != 2 {
			t.Errorf("policy types %v", got.Spec.PolicyTypes)
		}
	})

	t.Run("job completes", func(t *testing.T) {
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "once"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}}},
		}
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			j, err := cs.BatchV1().Jobs(ns).Get(ctx, "once", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return j.Status.Succeeded == 1, nil
		})
		if err != nil {
			t.Errorf("job did not complete: %v", err)
		}
	})

	t.Run("deleting a deployment garbage-collects its replicaset and pods", func(t *testing.T) {
		rsList, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(rsList.Items) != 1 {
			t.Fatalf("replicasets of web: %v (%d)", err, len(rsList.Items))
		}
		rsName := rsList.Items[0].Name
		t0 := time.Now()
		// Background propagation: the API deletes the Deployment at once and
		// leaves the dependants to the garbage collector.
		if err := cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, rsName, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			return err == nil && len(pods.Items) == 0, nil
		})
		if err != nil {
			t.Fatalf("replicaset %s or its pods still there: %v", rsName, err)
		}
		t.Logf("ReplicaSet and pods garbage-collected after %s", time.Since(t0).Round(time.Millisecond))
	})

	t.Run("many pods", func(t *testing.T) {
		t0 := time.Now()
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("many", 200, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAvailable(ctx, t, cs, ns, "many", 200)
		t.Logf("200-replica Deployment Available after %s", time.Since(t0).Round(time.Millisecond))
	})

	// Memory of the running cluster, for the record.
	pids := clusterPids(t, dir)
	var totalRSS, totalPSS int
	for name, pid := range pids {
		rss, pss := memory(pid)
		totalRSS += rss
		totalPSS += pss
		t.Logf("memory %-24s RSS %4d MiB  PSS %4d MiB", name, rss, pss)
	}
	t.Logf("memory total RSS %d MiB, PSS %d MiB (PSS counts the shared binary once)", totalRSS, totalPSS)
	if len(pids) != 6 {
		t.Errorf("pid files for %v, want supervisor + 5 components", pids)
	}

	t0 = time.Now()
	if _, err := run("down", "--dir", dir); err != nil {
		t.Fatalf("down: %v", err)
	}
	downDone = true
	t.Logf("down: %s", time.Since(t0).Round(time.Millisecond))
	if left := processesMentioning(dir); len(left) > 0 {
		t.Errorf("processes left after down:\n%s", strings.Join(left, "\n"))
	}
	for name, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Contains(cmdline, []byte(dir)) {
				t.Errorf("%s (pid %d) still exists after down", name, pid)
			}
		}
	}
	if _, err := run("status", "--dir", dir); err == nil {
		t.Error("status reports a stopped cluster as running")
	}
	if _, err := run("down", "--dir", dir); err != nil {
		t.Errorf("down of a stopped cluster: %v", err)
	}
}

func deployment(name string, replicas int32, runtimeClass *string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RuntimeClassName: runtimeClass,
					Containers: []corev1.Container{{
						Name:  "main",
						Image: "registry.k8s.io/pause:3.10", // never pulled: kwok runs nothing
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("10m"),
						}},
					}},
				},
			},
		},
	}
}

func waitAvailable(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	var last *appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = d
		if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas != replicas || d.Status.UpdatedReplicas != replicas {
			return false, nil
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("deployment %s not Available: %v (status %+v)", name, err, last.Status)
	}
}

func podsOf(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, app string) []corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
