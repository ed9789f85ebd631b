package object_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	fp "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/faultproxy"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// requestLog records every request through a faultproxy without touching
// any (its rule's Match says no).
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) rule() *fp.Rule {
	return &fp.Rule{Kind: fp.KindDelay, Times: -1, Match: func(r *http.Request) bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
		return false
	}}
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// lookupCase is one planned create and the one diagnostic it must give
// (none when path is "").
type lookupCase struct {
	name     string
	typ      string
	cfg      map[string]any
	path     string
	severity tfprotov6.DiagnosticSeverity
	mentions []string
}

func sandboxCfg(ns, runtimeClass string) map[string]any {
	ptpl := map[string]any{"containers": []any{pt.Container(nil)}}
	if runtimeClass != "" {
		ptpl["runtime_class_name"] = runtimeClass
	}
	return map[string]any{"name": "agent", "namespace": ns, "pod_template": ptpl}
}

// TestAccPlanLookups: with the cluster reachable, the plan of a new object
// looks up the RuntimeClass it names, which the API server would not check
// at write time: a missing one fails the plan at its attribute. What
// another resource may create in the same apply is not looked up and says
// nothing: the default "gvisor" RuntimeClass (GKE adds it with the first
// GKE Sandbox node pool), a namespace, a warm pool's template and a
// claim's warm pool (the quickstart creates them together, and a plan
// cannot tell them from typos). Nothing is written (every request is a
// GET), each object is read once per provider process (a second round of
// plans sends nothing), and an unreachable cluster fails nothing.
func TestAccPlanLookups(t *testing.T) {
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	gone := acctest.RandomName("no-such-ns")

	// An existing template, written directly (not through the proxy).
	tmpl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": extv1beta1.GroupVersion.String(), "kind": "SandboxTemplate",
		"metadata": map[string]any{"name": "present", "namespace": ns},
		"spec": map[string]any{"podTemplate": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "python", "image": "python:3.13"}},
		}}},
	}}
	if _, err := acctest.Dynamic(t).Resource(sandboxapi.SandboxTemplateGVR).Namespace(ns).Create(t.Context(), tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating SandboxTemplate %s/present: %v", ns, err)
	}

	proxy, err := fp.Start(acctest.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	var log requestLog
	proxy.Inject(log.rule())
	kc, err := proxy.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := pt.New(t, provider.New("test"))
	if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{"kubernetes": map[string]any{"config_path": kc}})); len(errs) > 0 {
		t.Fatalf("configure: %s", pt.Describe(errs))
	}

	tplCfg := func(ns, runtimeClass string) map[string]any {
		c := sandboxCfg(ns, runtimeClass)
		c["name"] = "python"
		return c
	}
	const (
		sandbox  = "agentsandbox_sandbox"
		template = "agentsandbox_sandbox_template"
		pool     = "agentsandbox_warm_pool"
		claim    = "agentsandbox_sandbox_claim"
		policy   = "agentsandbox_network_policy"
		errSev   = tfprotov6.DiagnosticSeverityError
	)
	cases := []lookupCase{
		{"sandbox: default gvisor RuntimeClass (not looked up)", sandbox, sandboxCfg(ns, ""), "", 0, nil},
		{"sandbox: missing RuntimeClass", sandbox, sandboxCfg(ns, "kata-missing"), "pod_template.runtime_class_name", errSev, []string{"RuntimeClass", `"kata-missing"`}},
		{"template: missing RuntimeClass", template, tplCfg(ns, "kata-missing"), "pod_template.runtime_class_name", errSev, []string{`"kata-missing"`, "no pod"}},
		{"template: present namespace, default RuntimeClass", template, tplCfg(ns, ""), "", 0, nil},
		{"sandbox: missing namespace (may be created in the same apply)", sandbox, sandboxCfg(gone, ""), "", 0, nil},
		{"template: missing namespace (may be created in the same apply)", template, tplCfg(gone, ""), "", 0, nil},
		{"warm pool: missing template (may be created in the same apply)", pool, map[string]any{"name": "pool", "namespace": ns, "template": "no-such-template"}, "", 0, nil},
		{"warm pool: present template", pool, map[string]any{"name": "pool", "namespace": ns, "template": "present"}, "", 0, nil},
		{"warm pool: missing namespace", pool, map[string]any{"name": "pool", "namespace": gone, "template": "python"}, "", 0, nil},
		{"claim: missing warm pool (may be created in the same apply)", claim, map[string]any{"name": "session", "namespace": ns, "warm_pool": "no-such-pool"}, "", 0, nil},
		{"claim: missing namespace", claim, map[string]any{"name": "session", "namespace": gone, "warm_pool": "pool"}, "", 0, nil},
		{"network policy: missing namespace", policy, map[string]any{"name": "isolate", "namespace": gone, "template": "python"}, "", 0, nil},
		{"sandbox: missing RuntimeClass in a missing namespace", sandbox, sandboxCfg(gone, "kata-missing"), "pod_template.runtime_class_name", errSev, []string{`"kata-missing"`}},
	}
	run := func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, diags := s.PlanCreate(t, tc.typ, tc.cfg)
				if tc.path == "" {
					if len(diags) > 0 {
						t.Fatalf("want no diagnostic; got:\n  %s", pt.Describe(diags))
					}
					return
				}
				if len(diags) != 1 || pt.AttributePath(diags[0].Attribute) != tc.path || diags[0].Severity != tc.severity {
					t.Fatalf("want one diagnostic (severity %v) at %s; got:\n  %s", tc.severity, tc.path, pt.Describe(diags))
				}
				for _, m := range tc.mentions {
					if !strings.Contains(diags[0].Detail, m) {
						t.Errorf("diagnostic at %s does not mention %s: %s", tc.path, m, diags[0].Detail)
					}
				}
			})
		}
	}
	run(t)
	first := log.all()
	seen := map[string]bool{}
	for _, r := range first {
		if !strings.HasPrefix(r, http.MethodGet+" ") {
			t.Errorf("write during plan: %s", r)
		}
		if seen[r] {
			t.Errorf("read twice in one provider process: %s", r)
		}
		seen[r] = true
	}
	t.Logf("%d plans: %d requests, all GETs, each object once: %s", len(cases), len(first), strings.Join(first, "; "))
	// One RuntimeClass (kata-missing); the default gvisor, namespaces,
	// templates and pools are not looked up.
	if want := []string{"GET /apis/node.k8s.io/v1/runtimeclasses/kata-missing"}; !slices.Equal(first, want) {
		t.Errorf("requests %v, want %v (one per distinct non-default RuntimeClass, nothing else)", first, want)
	}
	t.Run("again", run)
	if again := log.all(); len(again) != len(first) {
		t.Errorf("the same plans again sent %d more requests (%v), want none (cached)", len(again)-len(first), again[len(first):])
	}

	t.Run("unreachable cluster", func(t *testing.T) {
		// A port nothing listens on.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		kc := filepath.Join(t.TempDir(), "down.kubeconfig")
		if err := os.WriteFile(kc, fmt.Appendf(nil, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://%s\n"+
			"contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\ncurrent-context: c\n", addr), 0o600); err != nil {
			t.Fatal(err)
		}
		s := pt.New(t, provider.New("test"))
		if errs := pt.Errors(s.ConfigureProvider(t, map[string]any{"kubernetes": map[string]any{"config_path": kc}})); len(errs) > 0 {
			t.Fatalf("configure: %s", pt.Describe(errs))
		}
		start := time.Now()
		for _, tc := range cases {
			if _, diags := s.PlanCreate(t, tc.typ, tc.cfg); len(diags) > 0 {
				t.Errorf("%s: want no diagnostic with the cluster down; got:\n  %s", tc.name, pt.Describe(diags))
			}
		}
		t.Logf("%d plans against an unreachable cluster: %s", len(cases), time.Since(start).Round(time.Millisecond))
	})
}
