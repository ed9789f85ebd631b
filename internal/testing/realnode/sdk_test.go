package realnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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
// Python runtime template in gVisor, a warm pool and an isolation policy),
// the release's sandbox router with scoped-token authorization, and an
// agent that uses the official Go SDK of the same release
// (sigs.k8s.io/agent-sandbox/clients/go/sandbox) in port-forward mode.
//
// The SDK's port-forward mode reaches the sandbox through the router with
// the default runtime (the legacy Python runtime API: /execute, /upload,
// /download), which is what the sandboxes run. Its other runtime, sandboxd,
// port-forwards to the sandbox pod itself (clients/go/sandbox/podtunnel.go),
// which no containerd node can do for a gVisor pod: containerd's CRI dials
// the port in the pod's network namespace, where gVisor's netstack does not
// listen (google/gvisor#3811, containerd/containerd#6638,
// kubernetes-sigs/agent-sandbox#158); this node shows it the same way
// ("failed to connect to localhost:8080 inside namespace ...: connection
// refused").
const (
	teamA       = "team-a"
	teamB       = "team-b"
	sdkTemplate = "python-runtime"
	sdkPool     = "python-runtime-pool"
	// runtimePort is the Python runtime's port (its Dockerfile) and the
	// SDK's default ServerPort (clients/go/sandbox/options.go).
	runtimePort = 8888
	// apiServerPort is the kubernetes Service's port.
	apiServerPort = 443
)

func runtimeImage() string { return "localhost/localcluster/python-runtime:" + releases.Default.Name }

// sdkConfig is what a platform team declares for one team: a Python
// runtime template (the provider's hardened defaults: gVisor, non-root, no
// capabilities, no service-account token), a warm pool of one, and a
// policy that admits only the team's router, on the runtime's port, and
// lets the sandbox reach the internet (pip, git) but nothing private or
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
      name      = "runtime"
      image     = %[4]q
      ports     = [{ name = "http", container_port = %[5]d }]
      resources = { limits = { cpu = "500m", memory = "512Mi" } }
      # Commands and files live in a volume (the runtime's SANDBOX_BASE_DIR),
      # not in the image (whose files are root's).
      env           = [{ name = "SANDBOX_BASE_DIR", value = "/workspace" }]
      volume_mounts = [{ name = "workspace", mount_path = "/workspace" }]
      # The runtime's health check (GET /): a claim is Ready once it answers.
      readiness_probe = { http_get = { path = "/", port = "http" }, period_seconds = 1 }
    }]
    volumes = [{ name = "workspace", empty_dir = { size_limit = "1Gi" } }]
  }
  network_policy_management = "Unmanaged"
}

resource "agentsandbox_warm_pool" %[1]q {
  name      = %[6]q
  namespace = %[3]q
  template  = agentsandbox_sandbox_template.%[1]s.name
  replicas  = 1
}

resource "agentsandbox_network_policy" %[1]q {
  name           = "%[2]s-isolation"
  namespace      = %[3]q
  template       = agentsandbox_sandbox_template.%[1]s.name
  allow_internet = true
  # The team's own router (the SDK's port-forward mode uses the router of
  # the sandbox's namespace), on the runtime's port.
  ingress = [{
    pod_selector = { match_labels = { app = "sandbox-router" } }
    ports        = [{ port = "%[5]d" }]
  }]
}
`, res, sdkTemplate, ns, runtimeImage(), runtimePort, sdkPool)
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

// sdkReports are the isolation reports of the two teams, each on its own
// router: team A's (scoped tokens) and team B's (the resource's default
// authorization). Team B's also evaluates team A's router as a source of
// its sandboxes.
func sdkReports() string {
	return fmt.Sprintf(`
data "agentsandbox_isolation_report" "team_a" {
  namespace        = %[1]q
  router_namespace = %[1]q
  depends_on = [
    agentsandbox_sandbox_router.team_a, agentsandbox_warm_pool.team_a, agentsandbox_network_policy.team_a,
    agentsandbox_sandbox_router.team_b, agentsandbox_warm_pool.team_b, agentsandbox_network_policy.team_b,
  ]
}

data "agentsandbox_isolation_report" "team_b" {
  namespace        = %[2]q
  router_namespace = %[2]q
  sources = [
    { name = "probe_from_team_a_router", namespace = %[1]q, labels = { app = "sandbox-router" }, port = %[3]d },
  ]
  depends_on = [
    agentsandbox_sandbox_router.team_a, agentsandbox_warm_pool.team_a, agentsandbox_network_policy.team_a,
    agentsandbox_sandbox_router.team_b, agentsandbox_warm_pool.team_b, agentsandbox_network_policy.team_b,
  ]
}
`, teamA, teamB, runtimePort)
}

// TestE2ESDK applies, in one configuration, two teams' templates, warm
// pools and policies, a router per team (team A's with scoped tokens, team
// B's with the resource's default authorization: TokenReview, token
// required) and their isolation reports. Then, as an agent would, it
// claims a sandbox from team A's warm pool with the official Go SDK,
// writes and reads a file and runs commands in it, and checks what must
// fail does: team A's router refuses the SDK without a token and with team
// B's token, team B's router refuses a request without a token (401);
// nobody reaches either router's proxy port over the pod network, and
// team A's router does not reach team B's sandboxes; from the sandbox, the
// metadata server, the API server and team B's sandbox are refused and the
// internet is reachable (as the policy says). The reports must say what
// the packets did, and that team B's router requires a token. The destroy
// must leave nothing.
func TestE2ESDK(t *testing.T) {
	requireEnv(t)
	acctest.PreCheck(t)
	ctx := context.Background()
	cs := acctest.Clientset(t)
	cfg := acctest.RESTConfig(t)
	t0 := time.Now()
	res := &sdkResults{}
	defer res.write(t)

	for _, ns := range []string{teamA, teamB} {
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
	serveClusterDNS(t, cs, hosts, teamA, teamB)
	secret := scopedTokenSecret(t, cs, teamA)

	// The controls: a pod of each team's namespace that no policy selects.
	for _, ns := range []string{teamA, teamB} {
		control := helperPod(ns, "control", map[string]string{"app": "control"})
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, control, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().Pods(ns).Delete(context.Background(), control.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
	}

	config := acctest.ConfigCompose(acctest.ProviderConfig(), sdkConfig(teamA), sdkConfig(teamB),
		routerConfig("team_a", teamA, scopedTokenAuthz), routerConfig("team_b", teamB, ""), sdkReports())
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(s *terraform.State) error {
				t.Logf("templates, warm pools, policies and routers applied after %s", time.Since(t0).Round(time.Millisecond))
				sdkChecks(t, cs, cfg, res, secret, apiServerIP, s)
				return nil
			},
		}},
		CheckDestroy: func(*terraform.State) error { return nothingLeft(ctx, cs, acctest.Dynamic(t)) },
	})
	res.add(t, SDKResult{Check: "destroy", From: "terraform destroy", To: teamA + ", " + teamB, Expected: "nothing left",
		Observed: "no template, warm pool, claim, sandbox, sandbox pod, network policy, router Deployment, Service or RBAC", Passed: !t.Failed(), Claim: "destroy leaves nothing"})
	t.Logf("SDK end-to-end run took %s (destroy included)", time.Since(t0).Round(time.Millisecond))
}

// tokenTransport is the agent's side of scoped tokens: each request the
// SDK sends through the router carries, as a Bearer token, the token the
// platform issued for the sandbox it names (X-Sandbox-Namespace,
// X-Sandbox-ID). token returns "" for no token.
type tokenTransport struct {
	base  http.RoundTripper
	token func(ns, name string) string
}

func (tt *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if tok := tt.token(r.Header.Get("X-Sandbox-Namespace"), r.Header.Get("X-Sandbox-ID")); tok != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return tt.base.RoundTrip(r)
}

// sdkOptions are the agent's SDK options: team A's warm pool, port-forward
// to the router (the SDK's default), tokens from token. The router's
// scoped tokens refuse requests that name a pod IP (authz/scopedtoken.go,
// untrustedRoutingHeaders): the SDK is told not to send one.
func sdkOptions(cfg *rest.Config, token func(ns, name string) string) sandbox.Options {
	return sandbox.Options{
		WarmPoolName:        sdkPool,
		Namespace:           teamA,
		Connectivity:        sandbox.ConnectivityPortForward,
		RestConfig:          cfg,
		Quiet:               true,
		DisablePodIPRouting: true,
		RequestTimeout:      time.Minute,
		HTTPTransport:       &tokenTransport{base: http.DefaultTransport.(*http.Transport).Clone(), token: token},
	}
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
		deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, d := range deps.Items {
			left = append(left, "deployment "+ns+"/"+d.Name)
		}
		// The router's Service (the sandboxes' headless Services go with
		// their Sandboxes, checked above).
		if _, err := cs.CoreV1().Services(ns).Get(ctx, routerServiceName, metav1.GetOptions{}); err == nil {
			left = append(left, "service "+ns+"/"+routerServiceName)
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		// The router's cluster-scoped objects outside agent-sandbox-system
		// are named after its namespace (team B's TokenReview binding).
		name := "sandbox-router-auth-delegator-" + ns
		if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); err == nil {
			left = append(left, "clusterrolebinding "+name)
		} else if !apierrors.IsNotFound(err) {
			return err
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
func sdkChecks(t *testing.T, cs kubernetes.Interface, cfg *rest.Config, res *sdkResults, secret []byte, apiServerIP string, s *terraform.State) {
	ctx := context.Background()
	// The warm pools' pods before the claim: the SDK must get one of them.
	warmA := sandboxPodIn(t, cs, teamA, sdkTemplate)
	podB := sandboxPodIn(t, cs, teamB, sdkTemplate)
	sandboxB := ownerSandbox(t, podB)
	waitRunning(t, cs, teamA, "control")
	control := getPod(t, cs, teamA, "control")

	mint := func(ns, name string) string {
		tok, err := authz.MintScopedToken(secret, ns, name, 10*time.Minute)
		if err != nil {
			t.Errorf("minting a scoped token for %s/%s: %v", ns, name, err)
		}
		return tok
	}
	t1 := time.Now()
	sb, err := sandbox.New(ctx, sdkOptions(cfg, func(ns, name string) string {
		if ns == "" || name == "" {
			return ""
		}
		return mint(ns, name)
	}))
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
	res.add(t, SDKResult{Check: "claim", From: "SDK (port-forward to the router)", To: "warm pool " + teamA + "/" + sdkPool,
		Expected: "a sandbox of the warm pool", Observed: fmt.Sprintf("claim %s, sandbox %s, pod %s (the pool's pod before the claim: %s), in %s", sb.ClaimName(), sb.SandboxName(), sb.PodName(), warmA.Name, time.Since(t1).Round(time.Millisecond)),
		Passed: sb.PodName() == warmA.Name, Claim: "the SDK claims a sandbox from the Terraform-declared warm pool"})

	// A file written and read back, and a command that reads it.
	const file, content = "hello.txt", "hello from the agent\n"
	if err := sb.Write(ctx, file, []byte(content)); err != nil {
		t.Fatalf("SDK: write %s: %v", file, err)
	}
	got, err := sb.Read(ctx, file)
	res.add(t, SDKResult{Check: "files", From: "SDK, team A's token", To: "sandbox " + sb.SandboxName(), Expected: fmt.Sprintf("read %q", content),
		Observed: fmt.Sprintf("read %q (err %v)", got, err), Passed: err == nil && string(got) == content, Claim: "files written and read through the router, with the sandbox's scoped token"})
	run, err := sb.Run(ctx, "sh -c 'cat /proc/version; dmesg | head -n 1; id -u; pwd; cat "+file+"'")
	if err != nil {
		t.Fatalf("SDK: run: %v", err)
	}
	lines := strings.Split(strings.TrimRight(run.Stdout, "\n"), "\n")
	ok := run.ExitCode == 0 && len(lines) == 5 && strings.Contains(lines[0], "gvisor") && strings.Contains(lines[1], "gVisor") &&
		lines[2] == "1000" && lines[3] == "/workspace" && lines[4]+"\n" == content
	res.add(t, SDKResult{Check: "run", From: "SDK, team A's token", To: "sandbox " + sb.SandboxName(), Expected: "exit 0 under gVisor, uid 1000 in /workspace, the file's content",
		Observed: fmt.Sprintf("exit %d, stdout %q, stderr %q", run.ExitCode, run.Stdout, run.Stderr), Passed: ok,
		Claim: "commands run in the sandbox, in gVisor's kernel (/proc/version, dmesg), as the template's non-root user"})

	// The router refuses the same SDK calls without a token and with
	// team B's: other SDK clients attach to the same claim.
	refused := func(name string, token func(ns, name string) string, want int, claim string) {
		c, err := sandbox.NewClient(ctx, sdkOptions(cfg, token))
		if err != nil {
			t.Fatal(err)
		}
		other, err := c.GetSandbox(ctx, sb.ClaimName(), teamA)
		if err != nil {
			t.Fatalf("SDK: attaching to claim %s: %v", sb.ClaimName(), err)
		}
		defer func() { _ = other.Disconnect(context.Background()) }()
		_, err = other.Read(ctx, file)
		var he *sandbox.HTTPError
		observed := fmt.Sprintf("%v", err)
		passed := errors.As(err, &he) && he.StatusCode == want
		if he != nil {
			observed = fmt.Sprintf("HTTP %d %s", he.StatusCode, strings.TrimSpace(he.Body))
		}
		res.add(t, SDKResult{Check: "router", From: "SDK, " + name, To: "router -> sandbox " + sb.SandboxName() + ": read " + file,
			Expected: fmt.Sprintf("refused (%d)", want), Observed: observed, Passed: passed, Claim: claim})
	}
	refused("no token", func(string, string) string { return "" }, http.StatusUnauthorized, "the router refuses a request without a token")
	refused("team B's token", func(string, string) string { return mint(teamB, sandboxB) }, http.StatusForbidden,
		"the router refuses a token scoped to another team's sandbox")

	routerChecks(t, cs, cfg, res, s, mint, sb.SandboxName(), podB)

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
		{"team B's sandbox", podB.Status.PodIP, runtimePort, Refused, "team B's policy admits only team B's router"},
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
				return fmt.Errorf("probe output %q: %w", out, err)
			}
			for i, d := range dests {
				want := d.want
				if from == "control" {
					want = Reachable
					if i == 2 {
						want = Refused // team B's ingress refuses the control too
					}
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
			return "", fmt.Errorf("%w: %s", err, stderr)
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
		got = "no answer"
		if i < len(gotCtl) {
			got = gotCtl[i]
		}
		want, claim := Reachable, "control: the refusal above is the policy's"
		if i == 2 {
			want, claim = Refused, "team B's policy admits only team B's router, not team A's pods either"
		}
		res.add(t, SDKResult{Check: "control", From: "control pod (no policy)", To: fmt.Sprintf("%s %s:%d", d.name, d.host, d.port),
			Expected: string(want), Observed: got, Passed: (want == Reachable) == strings.HasPrefix(got, "ok:"), Claim: claim})
	}
}

// The reports of TestE2ESDK.
const (
	reportA = "data.agentsandbox_isolation_report.team_a"
	reportB = "data.agentsandbox_isolation_report.team_b"
)

// sdkVerdicts: the probes of routerChecks the reports answer. Who reaches
// a router's proxy port from another namespace is its report's
// router.reachable_from.other_namespaces; the path from team A's router to
// team A's sandboxes is their from_sandbox_router, to team B's the source
// probe_from_team_a_router of team B's report.
func sdkVerdicts(p Probe) (string, func(map[string]string) []string, bool) {
	fixed := func(prefix string) func(map[string]string) []string {
		return func(map[string]string) []string { return []string{prefix} }
	}
	sandboxes := func(key string) func(map[string]string) []string {
		return func(a map[string]string) []string {
			var out []string
			for _, prefix := range sandboxesOf(a, sdkTemplate) {
				out = append(out, prefix+"network.ingress."+key+".")
			}
			return out
		}
	}
	switch {
	case p.To == "router-a" && p.Port == routerProxyPort:
		return reportA, fixed("router.reachable_from.other_namespaces."), true
	case p.To == "router-b" && p.Port == routerProxyPort:
		return reportB, fixed("router.reachable_from.other_namespaces."), true
	case p.From == "router-a" && p.To == "sandbox-a":
		return reportA, sandboxes("from_sandbox_router"), true
	case p.From == "router-a" && p.To == "sandbox-b":
		return reportB, sandboxes("probe_from_team_a_router"), true
	}
	return "", nil, false
}

// routerChecks: the routers as packets find them and as the reports say.
// Nobody reaches a router's proxy port over the pod network (no
// allowed_clients; the SDK port-forwards), while its probe port answers
// everyone (the control); team A's router reaches team A's sandbox and not
// team B's (sandbox_namespaces, and team B's policy admits only team B's
// router), asked with valid scoped tokens; team B's router, with the
// resource's default authorization, refuses a request without a token. The
// reports must agree with each packet and say the routers require tokens.
func routerChecks(t *testing.T, cs kubernetes.Interface, cfg *rest.Config, res *sdkResults, s *terraform.State,
	mint func(ns, name string) string, sandboxA string, podB *corev1.Pod,
) {
	sandboxB := ownerSandbox(t, podB)
	ctx := context.Background()
	routers := map[string]*corev1.Pod{"router-a": routerPod(t, cs, teamA), "router-b": routerPod(t, cs, teamB)}
	controls := map[string]*corev1.Pod{}
	for role, ns := range map[string]string{"control-a": teamA, "control-b": teamB} {
		waitRunning(t, cs, ns, "control")
		controls[role] = getPod(t, cs, ns, "control")
	}
	var packets []ProbeResult
	record := func(p Probe, to, got string) {
		passed := (p.Want == Reachable) == strings.HasPrefix(got, "ok:")
		packets = append(packets, ProbeResult{Probe: p, Passed: passed, Got: got})
		res.add(t, SDKResult{Check: p.Check, From: p.From, To: to, Expected: string(p.Want), Observed: got, Passed: passed, Claim: p.Claim})
	}

	// Each control to the other team's router: the proxy port (refused),
	// the probe port (reachable: the refusal is the policy's).
	for _, c := range []struct{ from, to string }{{"control-b", "router-a"}, {"control-a", "router-b"}} {
		router := routers[c.to]
		probes := []Probe{
			{Step: 1, Check: "router_ingress", From: c.from, To: c.to, Port: routerProxyPort, Proto: ProtoHTTP, Want: Refused,
				Claim: "the router's NetworkPolicy: no allowed_clients, so no pod reaches the proxy port"},
			{Step: 1, Check: "control", From: c.from, To: c.to, Port: routerProbePort, Proto: ProtoHTTP, Want: Reachable,
				Claim: "control: the router's probe port admits every source (the kubelet), so the refusal above is the policy's"},
		}
		args, _ := json.Marshal([][]any{{ProtoHTTP, router.Status.PodIP, routerProxyPort}, {ProtoHTTP, router.Status.PodIP, routerProbePort}})
		var got []string
		err := eventually(ctx, 90*time.Second, time.Second, func() error {
			out, stderr, err := execIn(cs, cfg, controls[c.from], []string{"python3", "-c", probeScript, DNSName, string(args)})
			if err != nil {
				return fmt.Errorf("%w: %s", err, stderr)
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(probes) {
				return fmt.Errorf("probe output %q: %w", out, err)
			}
			for i, p := range probes {
				if (p.Want == Reachable) != strings.HasPrefix(got[i], "ok:") {
					return fmt.Errorf("%s:%d: want %s, got %s", p.To, p.Port, p.Want, got[i])
				}
			}
			return nil
		})
		if err != nil {
			t.Logf("probes from %s: %v", c.from, err)
		}
		for i, p := range probes {
			observed := "no answer"
			if i < len(got) {
				observed = got[i]
			}
			record(p, fmt.Sprintf("%s (%s/%s, %s) %s:%d", c.to, router.Namespace, router.Name, router.Status.PodIP, p.Proto, p.Port), observed)
		}
	}

	// Team A's router to a sandbox of each team, with a valid scoped token
	// for it: only the policies can stop the request.
	for _, c := range []struct {
		to, ns, name, ip string
		want             Verdict
		claim            string
	}{
		{"sandbox-a", teamA, sandboxA, "", Reachable, "the router reaches its team's sandboxes (sandbox_namespaces, the team's ingress from its router)"},
		{"sandbox-b", teamB, sandboxB, podB.Status.PodIP, Refused, "the router reaches no other team's sandbox (sandbox_namespaces; team B admits only team B's router)"},
	} {
		p := Probe{Step: 1, Check: "router_egress", From: "router-a", To: c.to, Port: runtimePort, Proto: ProtoHTTP, Want: c.want, Claim: c.claim}
		status, body, err := routerRequest(ctx, cfg, routers["router-a"], c.ns, c.name, mint(c.ns, c.name))
		if err != nil {
			t.Errorf("router-a -> %s/%s: the request got no answer from the router: %v", c.ns, c.name, err)
			continue
		}
		// 200 is the runtime's answer; the router answers 502 when it
		// cannot connect to the sandbox.
		got := fmt.Sprintf("fail:HTTP %d %s", status, body)
		if status == http.StatusOK {
			got = fmt.Sprintf("ok:HTTP %d %s", status, body)
		} else if c.ip != "" {
			// The router's own account of the failure must be a refused
			// connection to the sandbox pod's address: the name resolved,
			// and the packet was what failed (not DNS, not authorization).
			line := routerDialError(ctx, cs, routers["router-a"], c.name)
			if !strings.Contains(line, c.ip+":") {
				got = fmt.Sprintf("no verdict: HTTP %d %s, and the router logged no failed connection to %s (%q)", status, body, c.ip, line)
				t.Errorf("router-a -> %s/%s: %s", c.ns, c.name, got)
				continue
			}
			got += " [router: " + line + "]"
		}
		record(p, fmt.Sprintf("sandbox %s/%s :%d (GET / through the router, a valid scoped token)", c.ns, c.name, runtimePort), got)
	}

	// Team B's router, with the resource's default authorization, refuses
	// a request without a token before anything else.
	status, body, err := routerRequest(ctx, cfg, routers["router-b"], teamB, sandboxB, "")
	observed := fmt.Sprintf("HTTP %d %s", status, body)
	if err != nil {
		observed = err.Error()
	}
	res.add(t, SDKResult{Check: "router", From: "a client without a token (port-forward)", To: "router-b (default authorization) -> sandbox " + sandboxB,
		Expected: "refused (401)", Observed: observed, Passed: err == nil && status == http.StatusUnauthorized,
		Claim: "the router installed with the resource's defaults refuses an unauthenticated request"})

	// What the reports say about each router's authorization.
	for _, r := range []struct{ address, ns, mode string }{{reportA, teamA, "scoped-token"}, {reportB, teamB, "tokenreview"}} {
		rs := s.RootModule().Resources[r.address]
		if rs == nil {
			t.Fatalf("%s is not in the state", r.address)
		}
		a := rs.Primary.Attributes
		var violations []string
		n, _ := strconv.Atoi(a["violations.#"])
		for i := 0; i < n; i++ {
			if title := a[fmt.Sprintf("violations.%d.title", i)]; strings.Contains(title, "router") {
				violations = append(violations, title)
			}
		}
		observed := fmt.Sprintf("installed %s, namespace %s, authz_mode %s, requires_token %s, policies %s, router violations %v",
			a["router.installed"], a["router.namespace"], a["router.authz_mode"], a["router.requires_token"], a["router.policies.0"], violations)
		res.add(t, SDKResult{Check: "report", From: r.address, To: "router of " + r.ns,
			Expected: fmt.Sprintf("installed, authz_mode %s, requires_token true, selected by its policy, no router violation", r.mode), Observed: observed,
			Passed: a["router.installed"] == "true" && a["router.namespace"] == r.ns && a["router.authz_mode"] == r.mode && a["router.requires_token"] == "true" &&
				a["router.policies.0"] == routerName && len(violations) == 0,
			Claim: "the report says the router has authorization on and requires a token"})
	}
	t.Run("report", func(t *testing.T) { compareWithReports(t, "TestE2ESDK/report", s, 1, packets, "packet", sdkVerdicts) })
}

// routerDialError is the error of the router's last "upstream connect
// failure" log line for sandbox, "" when it logged none.
func routerDialError(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, sandbox string) string {
	data, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "reading the router's log: " + err.Error()
	}
	found := ""
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "upstream connect failure") || !strings.Contains(line, sandbox) {
			continue
		}
		var entry struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Error != "" {
			found = entry.Error
		} else {
			found = line
		}
	}
	return found
}

// serveClusterDNS keeps the DNS stand-in's hosts file up to date with
// the cluster DNS records of the sandboxes of namespaces
// (<sandbox>.<namespace>.svc.cluster.local: the headless Service the
// controller makes for each Sandbox, which CoreDNS would answer with the
// pod's address), every 200 ms until the test ends. The router resolves
// sandboxes by these names (sandbox-router/proxy/resolve.go).
func serveClusterDNS(t *testing.T, cs kubernetes.Interface, hosts string, namespaces ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	write := func() {
		var b strings.Builder
		for _, ns := range namespaces {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: agentsv1beta1.SandboxTemplateRefHashLabel})
			if err != nil {
				return
			}
			for _, p := range pods.Items {
				for _, o := range p.OwnerReferences {
					if o.Kind == "Sandbox" && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
						fmt.Fprintf(&b, "%s.%s.svc.cluster.local. %s\n", o.Name, ns, p.Status.PodIP)
					}
				}
			}
		}
		tmp := hosts + ".tmp"
		if os.WriteFile(tmp, []byte(b.String()), 0o644) == nil {
			_ = os.Rename(tmp, hosts)
		}
	}
	go func() {
		defer close(done)
		for {
			write()
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
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
