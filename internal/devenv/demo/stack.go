package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// The emulated GKE cluster every stack seeds.
const (
	Project  = "agentsandbox-demo"
	Location = "us-central1"
	Cluster  = "agents"
)

// Options say where a stack keeps its state.
type Options struct {
	// RepoRoot is the repository checkout (for build.sh and the default run
	// directory below .cache/testenv).
	RepoRoot string
	// Dir is the local cluster's run directory; empty means a fresh one
	// below RepoRoot/.cache/testenv.
	Dir string
	// LocalclusterBin is the localcluster binary; empty builds it.
	LocalclusterBin string
	// Log receives progress, the emulator's request log and the release
	// server's; nil means os.Stderr.
	Log io.Writer
}

// Stack is a running stand-in for GKE: local control plane, the release's
// real agent-sandbox controller (out of cluster), GKE emulator and release
// server. Stop it exactly once.
type Stack struct {
	// Kubeconfig is the local control plane's admin kubeconfig.
	Kubeconfig string
	// RunID and ClusterDir identify the environment's processes (see
	// testenv.Leftovers).
	RunID      string
	ClusterDir string
	// AccessToken is the only bearer token the emulator accepts; it is the
	// local cluster's static admin token, so Kubernetes credentials derived
	// from the emulated cluster work against the local control plane.
	AccessToken string
	// GKEURL is the emulator's base URL, for `gke { endpoint = ... }`.
	GKEURL string
	// ReleaseURL is the release server's base URL, for release_base_url.
	ReleaseURL string
	// GKE is the emulator itself (tests inspect it).
	GKE *gkeemu.Server

	// api holds the emulator to GKE's published API (see APIViolations).
	api *gkeemu.Guard

	env     *testenv.Env
	servers []*http.Server
	log     io.Writer
}

// ClusterName is the emulated cluster's full resource name, the value of
// `kubernetes { gke_cluster = ... }`.
func (s *Stack) ClusterName() string {
	return "projects/" + Project + "/locations/" + Location + "/clusters/" + Cluster
}

// Start brings the stack up. On failure whatever was started is stopped.
func Start(ctx context.Context, o Options) (*Stack, error) {
	s := &Stack{log: o.Log}
	if s.log == nil {
		s.log = os.Stderr
	}
	if err := s.start(ctx, o); err != nil {
		return nil, errors.Join(err, s.Stop(context.WithoutCancel(ctx)))
	}
	return s, nil
}

func (s *Stack) start(ctx context.Context, o Options) error {
	env, err := testenv.Start(ctx, testenv.Options{
		RepoRoot:        o.RepoRoot,
		Dir:             o.Dir,
		LocalclusterBin: o.LocalclusterBin,
		// agentsandbox_controller installs the CRDs, as it would on GKE;
		// the release's controller starts once they are served.
		NoCRDs:         true,
		Controller:     testenv.RealController(releases.Default, o.RepoRoot),
		ControllerWait: -1,
		Log:            s.log,
	})
	if err != nil {
		return err
	}
	s.env, s.Kubeconfig, s.RunID, s.ClusterDir = env, env.Kubeconfig, env.RunID, env.Dir
	if env.Dir == "" {
		return errors.New("demo: the stack needs the local control plane, not a given cluster")
	}
	token, err := os.ReadFile(filepath.Join(env.Dir, "admin-token"))
	if err != nil {
		return fmt.Errorf("reading the local cluster's admin token: %w", err)
	}
	s.AccessToken = strings.TrimSpace(string(token))

	emu, err := s.newEmulator()
	if err != nil {
		return err
	}
	spec := gkeemu.ClusterSpec{Project: Project, Location: Location, Name: Cluster}
	if err := gkeemu.AccessFromKubeconfig(&spec, env.Kubeconfig, ""); err != nil {
		return err
	}
	if _, err := emu.AddCluster(spec); err != nil {
		return err
	}
	s.GKE = emu
	if s.GKEURL, err = s.serve(emu); err != nil {
		return err
	}
	s.GKEURL += "/"
	if s.ReleaseURL, err = s.serve(logRequests(ReleaseHandler(), s.logf("release server"))); err != nil {
		return err
	}
	return nil
}

// newEmulator returns the stack's GKE emulator, held to GKE's published
// container/v1 API as the emulator is in every test: a request the
// discovery document does not allow is refused as GKE refuses it, and each
// departure (requests and the emulator's own answers) is logged and kept
// for APIViolations.
func (s *Stack) newEmulator() (*gkeemu.Server, error) {
	opts := gkeemu.Options{AccessToken: s.AccessToken, Logf: s.logf("gkeemu")}
	logf := s.logf("gkeemu")
	guard, err := gkeemu.NewGuard(&opts, func(v apidoc.Violation) {
		logf("NOT IN GKE'S PUBLISHED API (container/v1 discovery document): %s", v)
	})
	if err != nil {
		return nil, err
	}
	s.api = guard
	return gkeemu.New(opts), nil
}

// APIViolations returns every request and answer of the emulator so far
// that GKE's published API (the container/v1 discovery document) does not
// allow, naming the field. The examples' tests fail on any.
func (s *Stack) APIViolations() []apidoc.Violation {
	if s.api == nil {
		return nil
	}
	return s.api.Violations()
}

// ReleaseHandler serves the offline bundles the way upstream's GitHub
// releases are laid out: GET <base>/<tag>/<asset>, e.g.
// /v1.0.3/sandbox-with-extensions.yaml. A mirror for an air-gapped
// install has the same shape.
func ReleaseHandler() http.Handler {
	return http.FileServerFS(bundles.FS())
}

// serve serves h on a free loopback port until Stop and returns its URL.
func (s *Stack) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// Stop shuts the servers down and tears the environment down, with the
// harness's leak check.
func (s *Stack) Stop(ctx context.Context) error {
	var errs []error
	for _, srv := range s.servers {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := srv.Shutdown(sctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	s.servers = nil
	if s.env != nil {
		errs = append(errs, s.env.Stop(ctx))
	}
	return errors.Join(errs...)
}

// Variables are the input variables of the example configurations that
// point them at this stack (examples/quickstart takes all of them,
// examples/existing-cluster the kubeconfig and release_base_url).
func (s *Stack) Variables() map[string]string {
	return map[string]string{
		"project":          Project,
		"location":         Location,
		"cluster":          Cluster,
		"gke_endpoint":     s.GKEURL,
		"gke_access_token": s.AccessToken,
		// The emulator speaks plain HTTP on loopback: the examples opt in
		// to sending the token there, explicitly.
		"gke_allow_credentials_over_http": "true",
		"release_base_url":                s.ReleaseURL,
		"kubeconfig":                      s.Kubeconfig,
	}
}

// WriteVarFile writes vars, restricted to names, as a .tfvars.json file
// (mode 0600: it holds the local cluster's admin token).
func WriteVarFile(path string, vars map[string]string, names ...string) error {
	out := map[string]string{}
	for _, n := range names {
		v, ok := vars[n]
		if !ok {
			return fmt.Errorf("no value for variable %q", n)
		}
		out[n] = v
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o600)
}

// Describe says, for a person reading the demo's output, what each part
// of the stack is, and above all what is simulated.
func (s *Stack) Describe() []string {
	return []string{
		"Kubernetes: a REAL control plane (etcd, kube-apiserver, controller-manager, scheduler built from k8s.io/kubernetes) " +
			"on 127.0.0.1, kubeconfig " + s.Kubeconfig + ".",
		"Nodes: SIMULATED by kwok (system-pool-N, gvisor-pool-N): no container ever runs, so nothing runs in gVisor and " +
			"NetworkPolicies are stored and validated by the API server but enforced by nobody.",
		"GKE: an EMULATOR of the container/v1 API (internal/testing/gkeemu, not Google) at " + s.GKEURL + "; its cluster " +
			s.ClusterName() + " points at the local control plane. Node pools created there get no VMs and no nodes: " +
			"the kwok gvisor-pool-N nodes stand in for them.",
		"agent-sandbox controller: agentsandbox_controller installs the release's CRDs, RBAC and Deployment for real, " +
			"but its pod lands on a fake node and never runs. The same release's REAL controller (upstream's " +
			"cmd/agent-sandbox-controller " + releases.Default.Name + ", built from the Go module proxy) runs on this " +
			"machine, out of cluster, and reconciles sandboxes, templates, warm pools and claims instead.",
		"Release assets: upstream's own agent-sandbox release files (internal/sandboxapi/bundles, rendered from each " +
			"release's Go module as upstream's release tool renders them), served at " + s.ReleaseURL +
			"/<tag>/<asset>, the same layout as a mirror for an air-gapped install.",
	}
}

// logf returns a Logf writing "<name>: ..." lines to the stack's log.
func (s *Stack) logf(name string) func(string, ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(s.log, "%s %s: %s\n", time.Now().Format("15:04:05.000"), name, fmt.Sprintf(format, args...))
	}
}

// logRequests logs one line per request with its status.
func logRequests(h http.Handler, logf func(string, ...any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		logf("%s %s -> %d", r.Method, r.URL.Path, rec.status)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
