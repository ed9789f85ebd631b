package exampletest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/demo"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// The example directories the acceptance test applies, in order. Each one
// installs the controller; CRDs stay on destroy (keep_crds_on_destroy), so
// the next one upgrades nothing and finds them in place.
var exampleDirs = []string{"existing-cluster", "platform-teams", "quickstart", "python-warm-pool"}

var (
	gvrNetworkPolicy = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	gvrDeployment    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrService       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// cluster is the private stack's cluster as the checks see it.
type cluster struct {
	dyn dynamic.Interface
	cs  kubernetes.Interface
}

func (c cluster) get(t *testing.T, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := c.dyn.Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return obj
}

// gone waits until none of the named objects exists, and until no Sandbox
// is left in ns (a warm pool's members go by garbage collection).
func (c cluster) gone(t *testing.T, ns string, refs map[schema.GroupVersionResource][]string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var left []string
		for gvr, names := range refs {
			for _, name := range names {
				_, err := c.dyn.Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
				case err != nil:
					t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
				default:
					left = append(left, gvr.Resource+"/"+name)
				}
			}
		}
		sbx, err := c.dyn.Resource(sandboxapi.SandboxGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sbx.Items {
			left = append(left, "sandboxes/"+s.GetName())
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still present after destroy: %v", left)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// sandboxesOfPool lists the warm pool members that are ready, by node.
func (c cluster) readyPoolPods(t *testing.T, ns, selector string) map[string]string {
	t.Helper()
	pods, err := c.cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				out[p.Name] = p.Spec.NodeName
			}
		}
	}
	return out
}

// startStack starts the demo stack (local control plane, GKE emulator,
// release server) for t and stops it at t's end. Its emulator is held to
// GKE's published container/v1 API (demo.Stack.APIViolations): any request
// the provider sent or answer the emulator gave that the discovery document
// does not allow fails t, naming the field.
func startStack(t *testing.T, root string) *demo.Stack {
	t.Helper()
	st, err := demo.Start(t.Context(), demo.Options{
		RepoRoot:        root,
		LocalclusterBin: os.Getenv(testenv.LocalclusterBinVar),
		Log:             testLog{t},
	})
	if err != nil {
		t.Fatalf("starting the local stand-in for GKE: %v", err)
	}
	t.Cleanup(func() {
		for _, v := range st.APIViolations() {
			t.Errorf("gkeemu: not in GKE's published API (container/v1 discovery document): %s", v)
		}
		if err := st.Stop(context.Background()); err != nil {
			t.Errorf("stopping the stand-in: %v", err)
		}
	})
	return st
}

// TestAccExamples plans every example directory against the local stand-in
// for GKE (the first plan must give no warning), applies it, checks what it
// made, re-plans (the plan must be empty), destroys it and checks that
// everything is gone. It does so twice per example, with the fast path on
// and off, and requires Terraform's own view of both runs to be identical
// (applyExamplesBothWays); under TF_ACC_TERRAFORM_PATHS (make
// testacc-matrix) once per example under each CLI of the version matrix,
// with the fast path on.
func TestAccExamples(t *testing.T) {
	acctest.PreCheck(t)
	root := repoRoot(t)
	st := startStack(t, root)
	cfg, err := testenv.RESTConfig(st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := cluster{dyn: dynamic.NewForConfigOrDie(cfg), cs: kubernetes.NewForConfigOrDie(cfg)}
	rc := cliConfig(t)

	// TF_ACC_TERRAFORM_PATHS (make testacc-matrix) runs every example under
	// each CLI of the version matrix in turn, on this one stack.
	clis := os.Getenv("TF_ACC_TERRAFORM_PATHS")
	if clis == "" {
		applyExamplesBothWays(t, c, st, rc, terraformBin(t))
		return
	}
	for _, cli := range strings.Split(clis, ",") {
		label, bin, ok := strings.Cut(cli, "=")
		if !ok {
			t.Fatalf("TF_ACC_TERRAFORM_PATHS: %q is not label=path", cli)
		}
		if !t.Run(label, func(t *testing.T) { applyExamples(t, c, st, rc, bin) }) {
			return // the next CLI would fail on this one's leftovers
		}
	}
}

// applyExamples applies, checks, re-plans and destroys every example
// directory with the CLI bin (the matrix's run; applyExampleWith is the same
// sequence with Terraform's JSON recorded, for make test).
func applyExamples(t *testing.T, c cluster, st *demo.Stack, rc, bin string) {
	examples := copyExamples(t)
	for _, name := range exampleDirs {
		ok := t.Run(name, func(t *testing.T) {
			dir := filepath.Join(examples, name)
			tf := newTFDir(t, dir, rc)
			tf.bin = bin
			vars := map[string]string{}
			for _, v := range declaredVariables(t, dir) {
				if val, ok := st.Variables()[v]; ok {
					vars[v] = val
				}
			}
			names := make([]string, 0, len(vars))
			for k := range vars {
				names = append(names, k)
			}
			if err := demo.WriteVarFile(filepath.Join(dir, "terraform.tfvars.json"), vars, names...); err != nil {
				t.Fatal(err)
			}
			check := checks[name]
			if check.before != nil {
				check.before(t, c)
			}

			tf.must("get") // installs local modules; providers come from dev_overrides
			// The first plan of an example (objects that name each other,
			// created in one apply) gives no warning: a plan cannot tell a
			// template, warm pool or namespace created in the same apply from
			// a typo, so it does not look them up (object.Lookup).
			if w := tf.planWarnings(); len(w) > 0 {
				t.Errorf("the first plan of %s gives %d warnings, want none:\n  %s", name, len(w), strings.Join(w, "\n  "))
			}
			t0 := time.Now()
			out := tf.must("apply", "-auto-approve", "-input=false")
			t.Logf("%s applied in %s", name, time.Since(t0).Round(time.Millisecond))
			if strings.Contains(out, checkFailed) {
				t.Errorf("the apply of %s fails a check:\n%s", name, out)
			}
			check.applied(t, c, st, tf, tf.outputs())

			out, code := tf.run("plan", "-detailed-exitcode", "-input=false")
			if code != 0 {
				t.Fatalf("the plan after apply is not empty (exit status %d):\n%s", code, out)
			}
			// Everything a check reads exists now: it is decided at plan,
			// and holds.
			if strings.Contains(out, checkFailed) || strings.Contains(out, checkDeferred) {
				t.Errorf("the plan after the apply of %s does not pass its checks:\n%s", name, out)
			}

			t0 = time.Now()
			tf.must("destroy", "-auto-approve", "-input=false")
			t.Logf("%s destroyed in %s", name, time.Since(t0).Round(time.Millisecond))
			check.destroyed(t, c, st)
		})
		if !ok {
			return // later examples would fail on the leftovers of this one
		}
	}
}

type exampleChecks struct {
	before    func(*testing.T, cluster)
	applied   func(*testing.T, cluster, *demo.Stack, *tfDir, map[string]json.RawMessage)
	destroyed func(*testing.T, cluster, *demo.Stack)
}

var checks = map[string]exampleChecks{
	"quickstart": {
		applied: func(t *testing.T, c cluster, st *demo.Stack, tf *tfDir, outs map[string]json.RawMessage) {
			pool := c.get(t, sandboxapi.SandboxWarmPoolGVR, "default", "python-runtime")
			if got, _, _ := unstructured.NestedInt64(pool.Object, "status", "readyReplicas"); got != 5 {
				t.Errorf("warm pool readyReplicas = %d, want 5", got)
			}
			if got := tf.outputString(outs, "warm_pool"); got != "default/python-runtime: 5/5 ready" {
				t.Errorf("output warm_pool = %q", got)
			}
			sbx := c.get(t, sandboxapi.SandboxGVR, "default", "agent-workspace")
			fqdn, _, _ := unstructured.NestedString(sbx.Object, "status", "serviceFQDN")
			if fqdn != "agent-workspace.default.svc.cluster.local" || tf.outputString(outs, "workspace_fqdn") != fqdn {
				t.Errorf("workspace FQDN: status %q, output %q", fqdn, tf.outputString(outs, "workspace_fqdn"))
			}
			// The isolation check read all six sandboxes as they run
			// (the pool's five and the workspace) and found them isolated.
			var iso struct {
				Sandboxes, Pods, Clean, Violations, GVisor int
			}
			if err := json.Unmarshal(outs["isolation"], &iso); err != nil || iso.Sandboxes != 6 || iso.Pods != 6 || iso.Clean != 6 || iso.Violations != 0 || iso.GVisor != 6 {
				t.Errorf("output isolation = %s (%v), want 6 sandboxes with pods, in gVisor, all clean", outs["isolation"], err)
			}
			c.get(t, gvrService, "default", "agent-workspace")
			c.get(t, gvrNetworkPolicy, "default", "isolate-execution-sandboxes")
			c.get(t, gvrDeployment, "agent-sandbox-system", "agent-sandbox-controller")
			// The hardened defaults reached the cluster without being written.
			tmpl := c.get(t, sandboxapi.SandboxTemplateGVR, "default", "python-runtime")
			spec, _, _ := unstructured.NestedMap(tmpl.Object, "spec", "podTemplate", "spec")
			if spec["runtimeClassName"] != "gvisor" || spec["automountServiceAccountToken"] != false {
				t.Errorf("template pod spec not hardened: runtimeClassName %v, automountServiceAccountToken %v",
					spec["runtimeClassName"], spec["automountServiceAccountToken"])
			}
			np, ok := st.GKE.NodePool(tf.outputString(outs, "node_pool"))
			if !ok || np.Config == nil || np.Config.SandboxConfig == nil || np.Config.SandboxConfig.Type != "GVISOR" {
				t.Errorf("emulator node pool %s: %+v", tf.outputString(outs, "node_pool"), np)
			}
		},
		destroyed: func(t *testing.T, c cluster, st *demo.Stack) {
			c.gone(t, "default", map[schema.GroupVersionResource][]string{
				sandboxapi.SandboxWarmPoolGVR: {"python-runtime"}, sandboxapi.SandboxTemplateGVR: {"python-runtime"},
				sandboxapi.SandboxGVR: {"agent-workspace"}, gvrService: {"agent-workspace"},
				gvrNetworkPolicy: {"isolate-execution-sandboxes"},
			})
			c.gone(t, "agent-sandbox-system", map[schema.GroupVersionResource][]string{gvrDeployment: {"agent-sandbox-controller"}})
			if _, ok := st.GKE.NodePool(st.ClusterName() + "/nodePools/agent-sandboxes"); ok {
				t.Error("the emulator still has node pool agent-sandboxes")
			}
		},
	},
	"existing-cluster": {
		applied: func(t *testing.T, c cluster, _ *demo.Stack, tf *tfDir, outs map[string]json.RawMessage) {
			if got := tf.outputString(outs, "warm_pool"); got != "default/python-runtime: 3/3 ready" {
				t.Errorf("output warm_pool = %q", got)
			}
			pods := c.readyPoolPods(t, "default", tf.outputString(outs, "warm_pool_selector"))
			if len(pods) != 3 {
				t.Errorf("ready pool pods: %v", pods)
			}
			c.get(t, gvrNetworkPolicy, "default", "python-runtime-isolation")
		},
		destroyed: func(t *testing.T, c cluster, _ *demo.Stack) {
			c.gone(t, "default", map[schema.GroupVersionResource][]string{
				sandboxapi.SandboxWarmPoolGVR: {"python-runtime"}, sandboxapi.SandboxTemplateGVR: {"python-runtime"},
				gvrNetworkPolicy: {"python-runtime-isolation"},
			})
		},
	},
	"python-warm-pool": {
		applied: func(t *testing.T, c cluster, _ *demo.Stack, tf *tfDir, outs map[string]json.RawMessage) {
			if got := tf.outputString(outs, "warm_pool"); got != "default/python: 2/2 ready" {
				t.Errorf("output warm_pool = %q", got)
			}
			c.get(t, gvrNetworkPolicy, "default", "python-isolation")
			// The router, with the resource's defaults: authorization on,
			// its own NetworkPolicy.
			dep := c.get(t, gvrDeployment, "agent-sandbox-system", "sandbox-router")
			ctrs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
			var args []string
			if len(ctrs) > 0 {
				args, _, _ = unstructured.NestedStringSlice(ctrs[0].(map[string]any), "args")
			}
			if !slices.Contains(args, "--authz-mode=tokenreview") || !slices.Contains(args, "--authz-tokenreview-require-token=true") {
				t.Errorf("router args %v: authorization not on", args)
			}
			c.get(t, gvrNetworkPolicy, "agent-sandbox-system", "sandbox-router")
			c.get(t, gvrService, "agent-sandbox-system", "sandbox-router-svc")
			if got := tf.outputString(outs, "router_url"); got != "http://sandbox-router-svc.agent-sandbox-system.svc.cluster.local:8080" {
				t.Errorf("output router_url = %q", got)
			}
			var router struct {
				AuthzMode     string `json:"authz_mode"`
				RequiresToken bool   `json:"requires_token"`
			}
			if err := json.Unmarshal(outs["router"], &router); err != nil || router.AuthzMode != "tokenreview" || !router.RequiresToken {
				t.Errorf("output router = %s (%v), want tokenreview requiring a token", outs["router"], err)
			}
			var iso struct{ Sandboxes, Pods, Clean, Violations int }
			if err := json.Unmarshal(outs["isolation"], &iso); err != nil || iso.Sandboxes != 2 || iso.Clean != 2 || iso.Violations != 0 {
				t.Errorf("output isolation = %s (%v), want 2 clean sandboxes", outs["isolation"], err)
			}
		},
		destroyed: func(t *testing.T, c cluster, _ *demo.Stack) {
			c.gone(t, "default", map[schema.GroupVersionResource][]string{
				sandboxapi.SandboxWarmPoolGVR: {"python"}, sandboxapi.SandboxTemplateGVR: {"python"}, gvrNetworkPolicy: {"python-isolation"},
			})
			c.gone(t, "agent-sandbox-system", map[schema.GroupVersionResource][]string{
				gvrDeployment: {"sandbox-router", "agent-sandbox-controller"}, gvrService: {"sandbox-router-svc"}, gvrNetworkPolicy: {"sandbox-router"},
			})
		},
	},
	"platform-teams": {
		// GKE would add nodes labelled and tainted for data-science's
		// dedicated pool; the emulator starts no VMs, so one fake gVisor
		// node of the local cluster is given that label and taint instead.
		before: func(t *testing.T, c cluster) { dedicateNode(t, c, "gvisor-pool-1", "data-science") },
		applied: func(t *testing.T, c cluster, st *demo.Stack, tf *tfDir, _ map[string]json.RawMessage) {
			for team, want := range map[string]int64{"data-science": 3, "support-bots": 2} {
				pool := c.get(t, sandboxapi.SandboxWarmPoolGVR, "default", team+"-pool")
				if got, _, _ := unstructured.NestedInt64(pool.Object, "status", "readyReplicas"); got != want {
					t.Errorf("%s-pool readyReplicas = %d, want %d", team, got, want)
				}
				sel, _, _ := unstructured.NestedString(pool.Object, "status", "selector")
				pods := c.readyPoolPods(t, "default", sel)
				for pod, node := range pods {
					if dedicated := node == "gvisor-pool-1"; dedicated != (team == "data-science") {
						t.Errorf("%s's pod %s runs on %s", team, pod, node)
					}
				}
				if int64(len(pods)) != want {
					t.Errorf("%s: ready pods %v", team, pods)
				}
				c.get(t, sandboxapi.SandboxTemplateGVR, "default", team+"-sandbox")
				c.get(t, gvrNetworkPolicy, "default", team+"-sandbox-isolation")
			}
			np, ok := st.GKE.NodePool(st.ClusterName() + "/nodePools/data-science-sandboxes")
			if !ok || np.Config.Labels["agentsandbox.dev/team"] != "data-science" {
				t.Errorf("emulator node pool data-science-sandboxes: %+v", np)
			}
			if _, ok := st.GKE.NodePool(st.ClusterName() + "/nodePools/support-bots-sandboxes"); ok {
				t.Error("support-bots got a node pool it did not ask for")
			}
			claim := tf.outputString(tf.outputs(), "support_bots_claim")
			if !strings.Contains(claim, `"warmPoolRef":`) || !strings.Contains(claim, `"name": "support-bots-pool"`) {
				t.Errorf("output support_bots_claim:\n%s", claim)
			}
		},
		destroyed: func(t *testing.T, c cluster, st *demo.Stack) {
			refs := map[schema.GroupVersionResource][]string{}
			for _, team := range []string{"data-science", "support-bots"} {
				refs[sandboxapi.SandboxWarmPoolGVR] = append(refs[sandboxapi.SandboxWarmPoolGVR], team+"-pool")
				refs[sandboxapi.SandboxTemplateGVR] = append(refs[sandboxapi.SandboxTemplateGVR], team+"-sandbox")
				refs[gvrNetworkPolicy] = append(refs[gvrNetworkPolicy], team+"-sandbox-isolation")
			}
			c.gone(t, "default", refs)
			if _, ok := st.GKE.NodePool(st.ClusterName() + "/nodePools/data-science-sandboxes"); ok {
				t.Error("the emulator still has node pool data-science-sandboxes")
			}
		},
	},
}

// dedicateNode gives a fake node the label and taint GKE puts on the nodes
// of a team's dedicated pool (see the module), until the test ends.
func dedicateNode(t *testing.T, c cluster, name, team string) {
	t.Helper()
	const key = "agentsandbox.dev/team"
	nodes := c.cs.CoreV1().Nodes()
	node, err := nodes.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels[key] = team
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: key, Value: team, Effect: corev1.TaintEffectNoSchedule})
	if _, err := nodes.Update(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		node, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("restoring node %s: %v", name, err)
			return
		}
		delete(node.Labels, key)
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == key })
		if _, err := nodes.Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Errorf("restoring node %s: %v", name, err)
		}
	})
}

// testLog sends the stand-in's log lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
