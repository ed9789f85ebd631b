package realnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

const (
	sandboxNS = "agent-sandboxes"
	routerNS  = "agent-sandbox-system" // the network policy's default router namespace
	realNode  = "gvisor-real-0"
	pythonImg = "localhost/localcluster/python3:3.11"
)

// agentScript is the program of every pod of the run: an HTTP server on
// AgentPort (the port the policy's default router rule admits) and on
// OtherPort, each answering with agentBody, as an agent runtime would have.
var agentScript = fmt.Sprintf(`import http.server, threading
def serve(port):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(("agent %%d" %% port).encode())
        def log_message(self, *a): pass
    http.server.ThreadingHTTPServer(("0.0.0.0", port), H).serve_forever()
threading.Thread(target=serve, args=(%d,), daemon=True).start()
serve(%d)
`, OtherPort, AgentPort)

func agentBody(port int) string { return fmt.Sprintf("agent %d", port) }

// identityScript reports, from inside a container, what the isolation
// claims are about.
const identityScript = `import json, os, subprocess
st = {}
for line in open("/proc/self/status"):
    k, _, v = line.partition(":")
    st[k] = v.strip()
out = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
       "CapEff": st["CapEff"], "CapPrm": st["CapPrm"], "CapBnd": st["CapBnd"], "CapAmb": st["CapAmb"],
       "NoNewPrivs": st["NoNewPrivs"], "version": open("/proc/version").read().strip(),
       "token": os.path.exists("/var/run/secrets/kubernetes.io/serviceaccount")}
try:
    out["dmesg"] = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10).stdout.splitlines()[:1]
except Exception as e:
    out["dmesg"] = ["error: %s" % e]
try:
    os.setuid(0)
    out["setuid0"] = "succeeded"
except Exception as e:
    out["setuid0"] = "refused: %s" % e
print(json.dumps(out))
`

// probeScript runs probes concurrently: argv[1] is the DNS name to ask
// for, argv[2] a JSON list of [protocol, host, port]; it prints a JSON
// list of "ok:<answer>" / "fail:<error>" in the same order. HTTP answers
// are the response body; DNS answers the first A record. Every attempt
// times out after 3 s.
const probeScript = `import json, random, socket, struct, sys
from concurrent.futures import ThreadPoolExecutor
NAME = sys.argv[1]
def http(host, port):
    s = socket.create_connection((host, port), timeout=3)
    try:
        s.settimeout(3)
        s.sendall(b"GET / HTTP/1.0\r\nHost: probe\r\n\r\n")
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
    finally:
        s.close()
    return data.partition(b"\r\n\r\n")[2].decode(errors="replace")[:80]
def query():
    q = struct.pack(">HHHHHH", random.randint(0, 65535), 0x0100, 1, 0, 0, 0)
    for label in NAME.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)
def parse(r):
    flags, an = struct.unpack(">H", r[2:4])[0], struct.unpack(">H", r[6:8])[0]
    if flags & 0xF:
        return "rcode %d" % (flags & 0xF)
    i = 12
    while r[i] != 0:
        i += r[i] + 1
    i += 5
    for _ in range(an):
        if r[i] & 0xC0 == 0xC0:
            i += 2
        else:
            while r[i] != 0:
                i += r[i] + 1
            i += 1
        typ, _, _, rdlen = struct.unpack(">HHIH", r[i:i + 10])
        i += 10
        if typ == 1:
            return socket.inet_ntoa(r[i:i + 4])
        i += rdlen
    return "no A record"
def dns_udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.sendto(query(), (host, port))
        return parse(s.recv(1500))
    finally:
        s.close()
def dns_tcp(host, port):
    s = socket.create_connection((host, port), timeout=3)
    try:
        s.settimeout(3)
        q = query()
        s.sendall(struct.pack(">H", len(q)) + q)
        data = b""
        while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
            b = s.recv(4096)
            if not b:
                break
            data += b
        return parse(data[2:])
    finally:
        s.close()
def probe(t):
    proto, host, port = t
    try:
        return "ok:" + {"http": http, "dns-udp": dns_udp, "dns-tcp": dns_tcp}[proto](host, port)
    except Exception as e:
        return "fail:%s: %s" % (type(e).__name__, str(e)[:100])
targets = json.loads(sys.argv[2])
with ThreadPoolExecutor(16) as ex:
    print(json.dumps(list(ex.map(probe, targets))))
`

// Names of the two templates under test (see Probes for their roles).
const (
	allowListTemplate = "e2e-python"
	internetTemplate  = "e2e-internet"
	managedTemplate   = "e2e-managed"
)

// templateConfig is the configuration under test: three hardened
// templates, each with a warm pool of one: "sandbox" with an isolation
// policy allowing DNS and the allow-list AllowListEgress, "internet" with
// one allowing the internet alone (both with the default ingress), and
// "managed", left to the controller's default policy. strict: the first
// policy updated in place to allow nothing (no DNS, no egress, no ingress).
func templateConfig(strict bool) string {
	var egress strings.Builder
	egress.WriteString("\n  allow_dns = true\n  allow_egress = [\n")
	for _, e := range AllowListEgress {
		except := ""
		if len(e.Except) > 0 {
			except = fmt.Sprintf(", except = [%q]", strings.Join(e.Except, `", "`))
		}
		fmt.Fprintf(&egress, "    { cidr = %q%s, ports = [{ port = %d }] },\n", e.CIDR, except, e.Port)
	}
	egress.WriteString("  ]")
	policy := egress.String()
	if strict {
		policy = "\n  # Nothing allowed: no ingress, and no egress (DNS included).\n  ingress = []"
	}
	template := func(res, name, management string) string {
		return fmt.Sprintf(`
resource "agentsandbox_sandbox_template" %[1]q {
  name      = %[2]q
  namespace = %[3]q

  # Everything else is the provider's hardened default: runtime_class_name
  # gvisor, no service-account token, non-root, no privilege escalation,
  # all capabilities dropped, RuntimeDefault seccomp.
  pod_template = {
    labels           = { "app.kubernetes.io/component" = "execution-sandbox" }
    security_context = { run_as_user = 1000 }
    containers = [{
      name      = "agent"
      image     = %[4]q
      command   = ["python3", "-c", %[5]s]
      ports     = [{ container_port = %[6]d }]
      resources = { limits = { cpu = "500m", memory = "512Mi" } }
    }]
  }
  network_policy_management = %[7]q
}

resource "agentsandbox_warm_pool" %[1]q {
  name      = "%[2]s-pool"
  namespace = %[3]q
  template  = agentsandbox_sandbox_template.%[1]s.name
  replicas  = 1
}
`, res, name, sandboxNS, pythonImg, acctest.HCLString(agentScript), AgentPort, management)
	}
	// "Unmanaged": the isolation comes from agentsandbox_network_policy
	// alone; "Managed" without network_policy: the controller's default.
	return template("e2e", allowListTemplate, "Unmanaged") + template("internet", internetTemplate, "Unmanaged") +
		template("managed", managedTemplate, "Managed") + fmt.Sprintf(`
# Ingress (both): the default, router pods app=sandbox-router in
# agent-sandbox-system, on 8888.
resource "agentsandbox_network_policy" "e2e" {
  name      = "%[1]s-isolation"
  namespace = %[2]q
  template  = agentsandbox_sandbox_template.e2e.name%[3]s
}

resource "agentsandbox_network_policy" "internet" {
  name           = "%[4]s-isolation"
  namespace      = %[2]q
  template       = agentsandbox_sandbox_template.internet.name
  allow_internet = true
}
`, allowListTemplate, sandboxNS, policy, internetTemplate)
}

// TestE2E applies three hardened templates, their warm pools and isolation
// policies with the provider, then checks from inside the real gVisor
// sandboxes that the claims hold: the isolation of the sandbox itself, and
// every probe of Probes. The subtests are the checks the resource docs
// name.
func TestE2E(t *testing.T) {
	requireEnv(t)
	acctest.PreCheck(t)
	ctx := context.Background()
	cs := acctest.Clientset(t)
	cfg := acctest.RESTConfig(t)
	t0 := time.Now()

	for _, ns := range []string{sandboxNS, routerNS} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	startOutside(t)

	// Helper pods, all in gVisor on the real node: the router, two pods
	// that must not get in (right namespace without the label, the label
	// in the wrong namespace), and a control that no policy selects.
	helpers := []*corev1.Pod{
		helperPod(routerNS, "router", map[string]string{"app": "sandbox-router"}),
		helperPod(routerNS, "stranger", map[string]string{"app": "not-the-router"}),
		helperPod(sandboxNS, "impostor", map[string]string{"app": "sandbox-router"}),
		helperPod(sandboxNS, "control", map[string]string{"app": "control-sandbox"}),
	}
	for _, p := range helpers {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
	}
	for _, p := range helpers {
		waitRunning(t, cs, p.Namespace, p.Name)
	}
	t.Logf("helper pods running after %s", time.Since(t0).Round(time.Millisecond))

	pods := func() map[string]*corev1.Pod {
		m := map[string]*corev1.Pod{
			"sandbox":  sandboxPod(t, cs, allowListTemplate),
			"internet": sandboxPod(t, cs, internetTemplate),
			"managed":  sandboxPod(t, cs, managedTemplate),
		}
		for _, p := range helpers {
			m[p.Name] = getPod(t, cs, p.Namespace, p.Name)
		}
		return m
	}
	runStep := func(step int) {
		requireEnforcer(t)
		t1 := time.Now()
		groups := runProbes(cs, cfg, pods(), step)
		t.Logf("step %d: %d probe groups ran in %s (%s into the run)", step, len(groups), time.Since(t1).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
		if step == 1 {
			// The enforcer's state while the policies apply: what down
			// must remove with the node's namespace.
			recordEnforcerState(t)
		}
		var checks []string
		for _, p := range Probes {
			if p.Step == step && !slices.Contains(checks, p.Check) {
				checks = append(checks, p.Check)
			}
		}
		for _, check := range checks {
			t.Run(check, func(t *testing.T) {
				for _, g := range groups {
					g.report(t, check)
				}
			})
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), templateConfig(false), reportConfig()),
			Check: func(*terraform.State) error {
				t.Logf("templates, warm pools and policies applied; warm pools ready after %s", time.Since(t0).Round(time.Millisecond))
				t.Run("sandbox_isolation", func(t *testing.T) { checkIsolation(t, cs, cfg, sandboxPod(t, cs, allowListTemplate)) })
				runStep(1)
				return nil
			},
		}, {
			// The same configuration: the isolation report is read again
			// (at plan), after the probes, and must agree with them.
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), templateConfig(false), reportConfig()),
			Check: func(s *terraform.State) error {
				t.Run("report", func(t *testing.T) { crossCheck(t, s, 1, recordedResults(), "packet") })
				return nil
			},
		}, {
			// The allow-list policy updated in place to allow nothing:
			// what was reachable a moment ago is now cut off.
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), templateConfig(true), reportConfig()),
			Check: func(*terraform.State) error {
				runStep(2)
				return nil
			},
		}, {
			Config: acctest.ConfigCompose(acctest.ProviderConfig(), templateConfig(true), reportConfig()),
			Check: func(s *terraform.State) error {
				t.Run("report", func(t *testing.T) { crossCheck(t, s, 2, recordedResults(), "packet") })
				return nil
			},
		}},
	})
	writeResults(t)
	t.Logf("end-to-end run took %s (the last step's destroy included)", time.Since(t0).Round(time.Millisecond))
}

// checkIsolation: the sandbox runs in gVisor, as non-root, without
// capabilities, unable to gain privileges, without a service-account token.
func checkIsolation(t *testing.T, cs kubernetes.Interface, cfg *rest.Config, pod *corev1.Pod) {
	const test = "TestE2E/sandbox_isolation"
	node, err := cs.CoreV1().Nodes().Get(context.Background(), pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, ok bool, detail string) {
		t.Helper()
		summary.add(test, name, ok, detail)
		if !ok {
			t.Errorf("%s: %s", name, detail)
		} else {
			t.Logf("%s: %s", name, detail)
		}
	}
	check("scheduled on the real gVisor node", pod.Spec.NodeName == realNode && ptr.Deref(pod.Spec.RuntimeClassName, "") == "gvisor",
		fmt.Sprintf("node %s (runtime %s), runtimeClassName %s", pod.Spec.NodeName, node.Status.NodeInfo.ContainerRuntimeVersion, ptr.Deref(pod.Spec.RuntimeClassName, "")))

	out, stderr, err := execIn(cs, cfg, pod, []string{"python3", "-c", identityScript})
	if err != nil {
		t.Fatalf("exec in %s: %v: %s", pod.Name, err, stderr)
	}
	var id struct {
		UID, EUID, GID                 int
		CapEff, CapPrm, CapBnd, CapAmb string
		NoNewPrivs, Version, Setuid0   string
		Token                          bool
		Dmesg                          []string
	}
	if err := json.Unmarshal([]byte(out), &id); err != nil {
		t.Fatalf("identity output %q: %v", out, err)
	}
	check("kernel is gVisor's", strings.Contains(id.Version, "gvisor") && len(id.Dmesg) > 0 && strings.Contains(id.Dmesg[0], "gVisor"),
		fmt.Sprintf("/proc/version %q, dmesg %q (the node's own kernel is %s)", id.Version, id.Dmesg, node.Status.NodeInfo.KernelVersion))
	check("not root", id.UID != 0 && id.EUID != 0, fmt.Sprintf("uid %d euid %d gid %d", id.UID, id.EUID, id.GID))
	zero := "0000000000000000"
	check("no capabilities", id.CapEff == zero && id.CapPrm == zero && id.CapBnd == zero && id.CapAmb == zero,
		fmt.Sprintf("CapEff %s CapPrm %s CapBnd %s CapAmb %s", id.CapEff, id.CapPrm, id.CapBnd, id.CapAmb))
	check("cannot escalate", id.NoNewPrivs == "1" && strings.HasPrefix(id.Setuid0, "refused"),
		fmt.Sprintf("NoNewPrivs %s, setuid(0) %s", id.NoNewPrivs, id.Setuid0))
	check("no service-account token", !id.Token && !ptr.Deref(pod.Spec.AutomountServiceAccountToken, true),
		fmt.Sprintf("/var/run/secrets/kubernetes.io/serviceaccount exists: %v, automountServiceAccountToken %v", id.Token, ptr.Deref(pod.Spec.AutomountServiceAccountToken, true)))
}

// probeGroup is the probes of one step that start from one pod, run by
// one exec, and their outcome.
type probeGroup struct {
	from   string
	pod    *corev1.Pod
	pods   map[string]*corev1.Pod
	probes []Probe
	got    []string
	rounds int
	err    error
}

// runProbes runs every probe of a step, one group (one exec at a time) per
// source pod, all pods at once. NetworkPolicy enforcement follows the apiserver
// (pod IPs, policies): each group is retried until every verdict is as
// expected (at most 90 s), then run once more to show a stable result
// rather than a lucky one.
func runProbes(cs kubernetes.Interface, cfg *rest.Config, pods map[string]*corev1.Pod, step int) []*probeGroup {
	var groups []*probeGroup
	byKey := map[string]*probeGroup{}
	for _, p := range Probes {
		if p.Step != step {
			continue
		}
		key := p.From
		if byKey[key] == nil {
			byKey[key] = &probeGroup{from: p.From, pod: pods[p.From], pods: pods}
			groups = append(groups, byKey[key])
		}
		byKey[key].probes = append(byKey[key].probes, p)
	}
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.run(cs, cfg)
		}()
	}
	wg.Wait()
	return groups
}

func (g *probeGroup) run(cs kubernetes.Interface, cfg *rest.Config) {
	var targets [][]any
	for _, p := range g.probes {
		host := p.To
		if dst := g.pods[p.To]; dst != nil {
			host = dst.Status.PodIP
		}
		targets = append(targets, []any{p.Proto, host, p.Port})
	}
	args, _ := json.Marshal(targets)
	once := func() error {
		out, stderr, err := execIn(cs, cfg, g.pod, []string{"python3", "-c", probeScript, DNSName, string(args)})
		if err != nil {
			return fmt.Errorf("exec in %s: %w: %s", g.pod.Name, err, stderr)
		}
		var got []string
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(g.probes) {
			return fmt.Errorf("probe output %q: %w", out, err)
		}
		g.got = got
		var bad []string
		for i, p := range g.probes {
			if !verdictHolds(p, got[i]) {
				bad = append(bad, fmt.Sprintf("%s: want %s, got %s", p.Target(), p.Want, got[i]))
			}
		}
		if len(bad) > 0 {
			return errors.New(strings.Join(bad, "; "))
		}
		return nil
	}
	g.err = eventually(context.Background(), 3*time.Minute, time.Second, func() error { g.rounds++; return once() })
	if g.err == nil {
		if err := once(); err != nil {
			g.err = fmt.Errorf("confirmation round: %w", err)
		}
	}
}

// report records each verdict of the group's probes of one check and
// fails the test on any unexpected one.
func (g *probeGroup) report(t *testing.T, check string) {
	t.Helper()
	n, bad := 0, 0
	for i, p := range g.probes {
		if p.Check != check {
			continue
		}
		n++
		got := "no answer"
		if i < len(g.got) {
			got = g.got[i]
		}
		ok := i < len(g.got) && verdictHolds(p, got)
		results.add(p, ok, got)
		summary.add("TestE2E/"+check, fmt.Sprintf("%s -> %s: %s", p.From, describe(p, g.pods), p.Want), ok, fmt.Sprintf("%s [%s]", got, p.Claim))
		if !ok {
			bad++
			t.Errorf("from %s (%s, %s): %s: want %s, got %s [%s]", g.from, g.pod.Name, g.pod.Status.PodIP, describe(p, g.pods), p.Want, got, p.Claim)
		}
	}
	// An error of the group (an exec that failed, or another check's
	// probe) fails this check only through this check's own verdicts.
	switch {
	case n == 0:
	case g.err != nil:
		t.Logf("from %s: %d of %d probe(s) of this check as expected; the pod's run: %v", g.from, n-bad, n, g.err)
	default:
		t.Logf("from %s (%s, %s): %d probe(s) as expected (the pod's %d probes of this step after %d round(s))", g.from, g.pod.Name, g.pod.Status.PodIP, n, len(g.probes), g.rounds)
	}
}

// verdictHolds: a reachable probe must get the destination's own answer
// (its body, or the DNS stand-in's address), a refused one must fail.
func verdictHolds(p Probe, got string) bool {
	if p.Want == Refused {
		return strings.HasPrefix(got, "fail:")
	}
	want := serverBody(p.To, p.Port)
	switch {
	case p.Proto != ProtoHTTP:
		want = AllowedIP
	case !isAddr(p.To):
		want = agentBody(p.Port) // a pod
	}
	return got == "ok:"+want
}

// describe names a probe's destination for the summary.
func describe(p Probe, pods map[string]*corev1.Pod) string {
	if dst := pods[p.To]; dst != nil {
		return fmt.Sprintf("%s (%s) %s:%d", p.To, dst.Status.PodIP, p.Proto, p.Port)
	}
	return fmt.Sprintf("%s %s:%d", p.To, p.Proto, p.Port)
}

func helperPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			RuntimeClassName:              ptr.To("gvisor"),
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](1000),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:    "main",
				Image:   pythonImg,
				Command: []string{"python3", "-c", agentScript},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

func getPod(t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.Pod {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func waitRunning(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	var last string
	err := eventually(context.Background(), 3*time.Minute, 500*time.Millisecond, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = string(p.Status.Phase)
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Waiting != nil {
				last += fmt.Sprintf(" (%s: %s)", c.State.Waiting.Reason, c.State.Waiting.Message)
			}
		}
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			return fmt.Errorf("pod %s/%s is %s", ns, name, last)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sandboxPod returns the running pod of the warm pool's sandbox.
func sandboxPod(t *testing.T, cs kubernetes.Interface, template string) *corev1.Pod {
	t.Helper()
	sel := agentsv1beta1.SandboxTemplateRefHashLabel + "=" + sandboxapi.NameHash(template)
	var pod *corev1.Pod
	err := eventually(context.Background(), 2*time.Minute, 500*time.Millisecond, func() error {
		list, err := cs.CoreV1().Pods(sandboxNS).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		for i := range list.Items {
			if p := &list.Items[i]; p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("no running pod with %s (%d pods)", sel, len(list.Items))
	})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// execIn runs a command in the pod's first container through the API
// server and the real kubelet (what `kubectl exec` does).
func execIn(cs kubernetes.Interface, cfg *rest.Config, pod *corev1.Pod, command []string) (string, string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: pod.Spec.Containers[0].Name, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	return stdout.String(), stderr.String(), err
}

// requireEnforcer fails the test unless the real node's NetworkPolicy
// enforcer (kube-router's network policy controller) has its chains in the
// node's iptables: without it every "reachable" probe would pass and only
// the refusals would fail, but a run must never pass for the wrong reason.
func requireEnforcer(t *testing.T) {
	t.Helper()
	for _, chain := range enforcerChains {
		out, err := exec.Command("nsenter", "--net="+cluster.nodeNetns, "--", "iptables", "-w", "5", "-S", chain).CombinedOutput()
		if err != nil {
			t.Fatalf("the NetworkPolicy enforcer's chain %s is not in the node's iptables: %v: %s", chain, err, strings.TrimSpace(string(out)))
		}
	}
}
