package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	"sigs.k8s.io/agent-sandbox/sandbox-router/authz"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestE2ESDK: the platform of two teams declared with the provider (each a
// sandboxd template in gVisor, a warm pool and an isolation policy), the
// release's sandbox router with scoped-token authorization, and an agent
// that uses the official Go SDK of the same release
// (sigs.k8s.io/agent-sandbox/clients/go/sandbox) in port-forward mode.
const (
	teamA       = "team-a"
	teamB       = "team-b"
	sdkTemplate = "python-sandboxd"
	sdkPool     = "python-sandboxd-pool"
	// sandboxdREST and sandboxdGRPC are sandboxd's default ports
	// (packages/sandboxd/cmd/sandboxd/main.go: --rest-port, --grpc-port),
	// which the SDK's defaults match (clients/go/sandbox/options.go).
	sandboxdREST = 8080
	sandboxdGRPC = 9090
	// apiServerPort is the kubernetes Service's port.
	apiServerPort = 443
)

func sandboxdImage() string { return "localhost/localcluster/sandboxd:" + releases.Default.Name }

// sdkConfig is what a platform team declares for one team: a sandboxd
// template (the provider's hardened defaults: gVisor, non-root, no
// capabilities, no service-account token), a warm pool of one, and a
// policy that admits only the router, on sandboxd's REST port, and lets
// the sandbox reach the internet (pip, git) but nothing private or
// link-local: not the metadata server, not the API server, not the other
// team.
func sdkConfig(ns string) string {
	res := strings.ReplaceAll(ns, "-", "_")
	return fmt.Sprintf(`
resource "agentsandbox_sandbox_template" %[1]q {
  name      = %[2]q
  namespace = %[3]q

  pod_template = {
    labels           = { "app.kubernetes.io/component" = "execution-sandbox" }
    security_context = { run_as_user = 1000, run_as_group = 1000 }
    containers = [{
      name      = "sandboxd"
      image     = %[4]q
      ports     = [{ name = "rest", container_port = %[5]d }, { name = "grpc", container_port = %[6]d }]
      resources = { limits = { cpu = "500m", memory = "512Mi" } }
    }]
  }
  network_policy_management = "Unmanaged"
}

resource "agentsandbox_warm_pool" %[1]q {
  name      = %[7]q
  namespace = %[3]q
  template  = agentsandbox_sandbox_template.%[1]s.name
  replicas  = 1
}

resource "agentsandbox_network_policy" %[1]q {
  name           = "%[2]s-isolation"
  namespace      = %[3]q
  template       = agentsandbox_sandbox_template.%[1]s.name
  allow_internet = true
  ingress = [{
    namespace_selector = { match_labels = { "kubernetes.io/metadata.name" = %[8]q } }
    pod_selector       = { match_labels = { app = "sandbox-router" } }
    ports              = [{ port = "%[5]d" }]
  }]
}
`, res, sdkTemplate, ns, sandboxdImage(), sandboxdREST, sandboxdGRPC, sdkPool, routerNS)
}

// SDKResult is one check of TestE2ESDK with its expected and observed
// verdict, written to sdk.json beside the probes' results.
type SDKResult struct {
	Check    string `json:"check"`
	From     string `json:"from"`
	To       string `json:"to"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	Passed   bool   `json:"passed"`
	Claim    string `json:"claim"`
}

type sdkResults struct {
	mu   sync.Mutex
	list []SDKResult
}

func (r *sdkResults) add(t *testing.T, res SDKResult) {
	t.Helper()
	r.mu.Lock()
	r.list = append(r.list, res)
	r.mu.Unlock()
	summary.add("TestE2ESDK/"+res.Check, fmt.Sprintf("%s -> %s: %s", res.From, res.To, res.Expected), res.Passed, fmt.Sprintf("%s [%s]", res.Observed, res.Claim))
	if !res.Passed {
		t.Errorf("%s: %s -> %s: want %s, got %s [%s]", res.Check, res.From, res.To, res.Expected, res.Observed, res.Claim)
	} else {
		t.Logf("%s: %s -> %s: %s: %s", res.Check, res.From, res.To, res.Expected, res.Observed)
	}
}

func (r *sdkResults) write(t *testing.T) {
	t.Helper()
	path := os.Getenv(ResultsVar)
	if path == "" {
		return
	}
	path = filepath.Join(filepath.Dir(path), "sdk.json")
	r.mu.Lock()
	data, err := json.MarshalIndent(r.list, "", "  ")
	r.mu.Unlock()
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		t.Errorf("writing %s: %v", path, err)
	}
}

// TestE2ESDK applies two teams' sandboxd templates, warm pools and
// policies with the provider, installs the router with authorization on,
// and then, as an agent would, claims a sandbox from team A's warm pool
// with the official Go SDK, writes and reads a file and runs commands in
// it, and checks what must fail does: the router refuses a request without
// a token and one with team B's token; from the sandbox, the metadata
// server, the API server and team B's sandbox are refused and the internet
// is reachable (as the policy says). The destroy must leave nothing.
func TestE2ESDK(t *testing.T) {
	requireEnv(t)
	acctest.PreCheck(t)
	ctx := context.Background()
	cs := acctest.Clientset(t)
	cfg := acctest.RESTConfig(t)
	t0 := time.Now()
	res := &sdkResults{}
	defer res.write(t)

	for _, ns := range []string{teamA, teamB, routerNS} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// The API server as the pods see it: the kubernetes Service's address
	// (there is no kube-proxy on this node: a stand-in of the outside
	// namespace listens there, so that a refusal is the policy's, which the
	// control pod shows).
	k8sSvc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apiServerIP := k8sSvc.Spec.ClusterIP
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	startOutsideWith(t, outsideOptions{Extra: []string{fmt.Sprintf("%s:%d", apiServerIP, apiServerPort)}, Hosts: hosts})

	secret, routerPod := installRouter(t, cs, sandboxdREST)
	t.Logf("router %s ready after %s", routerPod.Name, time.Since(t0).Round(time.Millisecond))

	// The control: a pod of team A's namespace that no policy selects.
	control := helperPod(teamA, "control", map[string]string{"app": "control"})
	if _, err := cs.CoreV1().Pods(teamA).Create(ctx, control, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Pods(teamA).Delete(context.Background(), control.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})

	config := acctest.ConfigCompose(acctest.ProviderConfig(), sdkConfig(teamA), sdkConfig(teamB))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				t.Logf("templates, warm pools and policies applied after %s", time.Since(t0).Round(time.Millisecond))
				sdkChecks(t, cs, cfg, res, secret, routerPod, hosts, apiServerIP)
				return nil
			},
		}},
		CheckDestroy: func(*terraform.State) error { return nothingLeft(ctx, cs, acctest.Dynamic(t)) },
	})
	res.add(t, SDKResult{Check: "destroy", From: "terraform destroy", To: teamA + ", " + teamB, Expected: "nothing left", Observed: "no template, warm pool, claim, sandbox, sandbox pod or network policy", Passed: !t.Failed(), Claim: "destroy leaves nothing"})
	t.Logf("SDK end-to-end run took %s (destroy included)", time.Since(t0).Round(time.Millisecond))
}

// nothingLeft checks that the teams' namespaces hold no object of the
// run's any more (the control pod is the test's own).
func nothingLeft(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface) error {
	var left []string
	for _, ns := range []string{teamA, teamB} {
		for _, gvr := range []schema.GroupVersionResource{sandboxapi.SandboxTemplateGVR, sandboxapi.SandboxWarmPoolGVR, sandboxapi.SandboxClaimGVR, sandboxapi.SandboxGVR} {
			list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, o := range list.Items {
				left = append(left, fmt.Sprintf("%s %s/%s", gvr.Resource, ns, o.GetName()))
			}
		}
		pols, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range pols.Items {
			left = append(left, "networkpolicy "+ns+"/"+p.Name)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: agentsv1beta1.SandboxTemplateRefHashLabel})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			left = append(left, "pod "+ns+"/"+p.Name)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("destroy left: %s", strings.Join(left, ", "))
	}
	return nil
}

// sdkChecks is the agent's side of the run.
func sdkChecks(t *testing.T, cs kubernetes.Interface, cfg *rest.Config, res *sdkResults, secret []byte, routerPod *corev1.Pod, hosts, apiServerIP string) {
	ctx := context.Background()
	// The warm pools' pods before the claim: the SDK must get one of them.
	warmA := sandboxPodIn(t, cs, teamA, sdkTemplate)
	podB := sandboxPodIn(t, cs, teamB, sdkTemplate)
	waitRunning(t, cs, teamA, "control")
	control := getPod(t, cs, teamA, "control")

	t1 := time.Now()
	sb, err := sandbox.New(ctx, sandbox.Options{
		WarmPoolName: sdkPool,
		Namespace:    teamA,
		Runtime:      sandbox.RuntimeSandboxd,
		Connectivity: sandbox.ConnectivityPortForward,
		RestConfig:   cfg,
		Quiet:        true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(ctx); err != nil {
		t.Fatalf("SDK: claiming a sandbox from warm pool %s/%s: %v", teamA, sdkPool, err)
	}
	defer func() {
		if err := sb.Close(context.Background()); err != nil {
			t.Errorf("SDK: closing the sandbox (deleting the claim): %v", err)
		}
	}()
	claimTime := time.Since(t1)
	res.add(t, SDKResult{Check: "claim", From: "SDK (port-forward, sandboxd)", To: "warm pool " + teamA + "/" + sdkPool,
		Expected: "a sandbox of the warm pool", Observed: fmt.Sprintf("claim %s, sandbox %s, pod %s (the pool's pod before the claim: %s), in %s", sb.ClaimName(), sb.SandboxName(), sb.PodName(), warmA.Name, claimTime.Round(time.Millisecond)),
		Passed: sb.PodName() == warmA.Name, Claim: "the SDK claims a sandbox from the Terraform-declared warm pool"})

	// A file written and read back, and a command that reads it.
	const path, content = "notes/hello.txt", "hello from the agent\n"
	if err := sb.Write(ctx, path, []byte(content)); err != nil {
		t.Fatalf("SDK: write %s: %v", path, err)
	}
	got, err := sb.Read(ctx, path)
	res.add(t, SDKResult{Check: "files", From: "SDK", To: "sandbox " + sb.SandboxName(), Expected: fmt.Sprintf("read %q", content),
		Observed: fmt.Sprintf("read %q (err %v)", got, err), Passed: err == nil && string(got) == content, Claim: "files written and read through sandboxd"})
	run, err := sb.Run(ctx, "cat /proc/version; dmesg | head -n 1; id -u; pwd; cat "+path)
	if err != nil {
		t.Fatalf("SDK: run: %v", err)
	}
	lines := strings.Split(strings.TrimRight(run.Stdout, "\n"), "\n")
	ok := run.ExitCode == 0 && len(lines) == 5 && strings.Contains(lines[0], "gvisor") && strings.Contains(lines[1], "gVisor") &&
		lines[2] == "1000" && lines[3] == "/workspace" && lines[4]+"\n" == content
	res.add(t, SDKResult{Check: "run", From: "SDK", To: "sandbox " + sb.SandboxName(), Expected: "exit 0 under gVisor, uid 1000 in /workspace, the file's content",
		Observed: fmt.Sprintf("exit %d, stdout %q, stderr %q", run.ExitCode, run.Stdout, run.Stderr), Passed: ok,
		Claim: "commands run in the sandbox, in gVisor's kernel (/proc/version, dmesg), as the template's non-root user"})

	// The router: scoped tokens, per sandbox.
	pod := getPod(t, cs, teamA, sb.PodName())
	appendHost(t, hosts, sb.SandboxName(), teamA, pod.Status.PodIP)
	sandboxB := ownerSandbox(t, podB)
	appendHost(t, hosts, sandboxB, teamB, podB.Status.PodIP)
	routerAddr := portForward(t, cfg, routerPod, routerProxyPort)
	tokenA, err := authz.MintScopedToken(secret, teamA, sb.SandboxName(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tokenB, err := authz.MintScopedToken(secret, teamB, sandboxB, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	routerCheck := func(name, to, ns, token, wantDesc, claim string, want func(int, string) bool) {
		status, body, err := routerGet(routerAddr, to, ns, token, "/v1/files/"+path)
		observed := fmt.Sprintf("HTTP %d %q", status, strings.TrimSpace(body))
		if err != nil {
			observed = err.Error()
		}
		res.add(t, SDKResult{Check: "router", From: name, To: fmt.Sprintf("router -> %s/%s GET /v1/files/%s", ns, to, path),
			Expected: wantDesc, Observed: observed, Passed: err == nil && want(status, body), Claim: claim})
	}
	// The router answers 401 for a missing token and 403 for a token of
	// another sandbox (sandbox-router/proxy/errors.go).
	routerCheck("no token", sb.SandboxName(), teamA, "", "refused (401)", "the router refuses a request without a token",
		func(s int, _ string) bool { return s == http.StatusUnauthorized })
	routerCheck("team B's token", sb.SandboxName(), teamA, tokenB, "refused (403)", "the router refuses a token scoped to another team's sandbox",
		func(s int, _ string) bool { return s == http.StatusForbidden })
	routerCheck("team A's token", sb.SandboxName(), teamA, tokenA, "reachable (200, the file)", "the router admits the sandbox's own token, and the policy admits the router",
		func(s int, b string) bool { return s == http.StatusOK && b == content })
	routerCheck("team B's token", sandboxB, teamB, tokenB, "reachable (404 from team B's sandboxd: no such file)", "control: team B's sandbox answers the router on its REST port",
		func(s int, b string) bool { return s == http.StatusNotFound && strings.Contains(b, "NOT_FOUND") })

	// From the sandbox (through the SDK) and from the control pod: the
	// policy's egress.
	type dest struct {
		name, host string
		port       int
		want       Verdict
		claim      string
	}
	dests := []dest{
		{"the metadata server", MetadataIP, HTTPPort, Refused, "allow_internet: not 169.254.0.0/16 (the metadata server)"},
		{"the API server (kubernetes Service address)", apiServerIP, apiServerPort, Refused, "allow_internet: not private ranges (the API server)"},
		{"team B's sandbox (sandboxd REST)", podB.Status.PodIP, sandboxdREST, Refused, "team B's policy admits only the router"},
		{"the internet", PublicIP, HTTPPort, Reachable, "allow_internet: public addresses are reachable"},
	}
	var targets [][]any
	for _, d := range dests {
		targets = append(targets, []any{ProtoHTTP, d.host, d.port})
	}
	args, _ := json.Marshal(targets)
	if err := sb.Write(ctx, "probe.py", []byte(probeScript)); err != nil {
		t.Fatalf("SDK: write probe.py: %v", err)
	}
	probe := func(from string, run func() (string, error)) []string {
		var got []string
		err := eventually(ctx, 90*time.Second, time.Second, func() error {
			out, err := run()
			if err != nil {
				return err
			}
			got = nil
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(dests) {
				return fmt.Errorf("probe output %q: %v", out, err)
			}
			for i, d := range dests {
				if from == "control" && i == 2 {
					continue // team B's ingress refuses the control too
				}
				want := d.want
				if from == "control" {
					want = Reachable
				}
				if (want == Reachable) != strings.HasPrefix(got[i], "ok:") {
					return fmt.Errorf("%s: want %s, got %s", d.name, want, got[i])
				}
			}
			return nil
		})
		if err != nil {
			t.Logf("probes from %s: %v", from, err)
		}
		return got
	}
	gotSB := probe("sandbox", func() (string, error) {
		r, err := sb.Run(ctx, "python3 probe.py "+DNSName+" '"+string(args)+"'")
		if err != nil {
			return "", err
		}
		if r.ExitCode != 0 {
			return "", fmt.Errorf("exit %d: %s", r.ExitCode, r.Stderr)
		}
		return r.Stdout, nil
	})
	gotCtl := probe("control", func() (string, error) {
		out, stderr, err := execIn(cs, cfg, control, []string{"python3", "-c", probeScript, DNSName, string(args)})
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, stderr)
		}
		return out, nil
	})
	for i, d := range dests {
		got := "no answer"
		if i < len(gotSB) {
			got = gotSB[i]
		}
		res.add(t, SDKResult{Check: "egress", From: "sandbox " + sb.SandboxName() + " (SDK Run)", To: fmt.Sprintf("%s %s:%d", d.name, d.host, d.port),
			Expected: string(d.want), Observed: got, Passed: (d.want == Reachable) == strings.HasPrefix(got, "ok:"), Claim: d.claim})
		if i == 2 {
			continue
		}
		got = "no answer"
		if i < len(gotCtl) {
			got = gotCtl[i]
		}
		res.add(t, SDKResult{Check: "control", From: "control pod (no policy)", To: fmt.Sprintf("%s %s:%d", d.name, d.host, d.port),
			Expected: string(Reachable), Observed: got, Passed: strings.HasPrefix(got, "ok:"), Claim: "control: the refusal above is the policy's"})
	}
}

// routerGet sends one request through the router, with the routing
// headers the SDK sends (clients/go/sandbox/types.go) and the token, if
// any, as a Bearer token.
func routerGet(addr, sandboxName, ns, token, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("X-Sandbox-ID", sandboxName)
	req.Header.Set("X-Sandbox-Namespace", ns)
	req.Header.Set("X-Sandbox-Port", fmt.Sprint(sandboxdREST))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	var status int
	var body string
	err = eventually(context.Background(), 60*time.Second, time.Second, func() error {
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		status, body = resp.StatusCode, string(b)
		// 502/503/504: the router could not reach the sandbox yet (DNS,
		// policy being programmed); try again.
		if status >= 502 && status <= 504 {
			return fmt.Errorf("HTTP %d %s", status, strings.TrimSpace(body))
		}
		return nil
	})
	return status, body, err
}

// appendHost adds the cluster DNS record of a sandbox's Service to the
// DNS stand-in's hosts file.
func appendHost(t *testing.T, hosts, name, ns, ip string) {
	t.Helper()
	f, err := os.OpenFile(hosts, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s.%s.svc.cluster.local. %s\n", name, ns, ip); err != nil {
		t.Fatal(err)
	}
}

// ownerSandbox is the name of the Sandbox that owns pod.
func ownerSandbox(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Sandbox" {
			return o.Name
		}
	}
	t.Fatalf("pod %s/%s has no Sandbox owner (%v)", pod.Namespace, pod.Name, pod.OwnerReferences)
	return ""
}

// sandboxPodIn returns the running pod of the template's warm pool in ns.
func sandboxPodIn(t *testing.T, cs kubernetes.Interface, ns, template string) *corev1.Pod {
	t.Helper()
	sel := agentsv1beta1.SandboxTemplateRefHashLabel + "=" + sandboxapi.NameHash(template)
	var pod *corev1.Pod
	err := eventually(context.Background(), 3*time.Minute, 500*time.Millisecond, func() error {
		list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		for i := range list.Items {
			if p := &list.Items[i]; p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("no running pod with %s in %s (%d pods)", sel, ns, len(list.Items))
	})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}
