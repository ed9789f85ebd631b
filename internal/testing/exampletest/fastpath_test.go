package exampletest_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/demo"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/tfjsoncmp"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// fastPathExamples are the examples TestAccExamples_fastPathOnAndOff applies
// both ways: all of them (each run both ways costs about as much as
// TestAccExamples' run of it).
var fastPathExamples = exampleDirs

// exampleRules are the normalisations of the examples' outputs (package
// tfjsoncmp): what two applies of the same example, one after the other on
// the same stand-in, legitimately disagree on.
var exampleRules = tfjsoncmp.Rules{
	Tokens: map[string]string{
		// A sandbox's pod IPs: the stand-in's nodes hand out addresses
		// in turn, and the other run's pods had some of them.
		"pod_ips": "pod-ip",
	},
	Patterns: []tfjsoncmp.Pattern{
		// The warm pools' sandboxes and pods (generateName), which the
		// isolation report lists and a claim adopts.
		{RE: tfjsoncmp.GeneratedName, With: "$1-<generated>"},
		// The stand-in's node a pod was scheduled to (the isolation
		// report says where each sandbox runs): the scheduler picks among
		// equally good nodes at random. TestAccExamples' checks (run here
		// too) hold each run to the nodes the example asks for.
		{RE: regexp.MustCompile(`\b(system|gvisor)-pool-\d+\b`), With: "$1-pool-<n>"},
	},
	// The harness's, not the example's (its detail lists the overrides
	// in map order).
	IgnoreDiagnostics: []string{devOverridesWarning},
}

// TestAccExamples_fastPathOnAndOff applies each example twice on one
// stand-in for GKE, with the fast path (AGENTSANDBOX_FASTPATH=on) and
// without it (off), as TestAccExamples does (same checks of what it made
// and of what its destroy left), and requires Terraform's own view of each
// step to be identical, normalised only as exampleRules says: the stream of
// `terraform plan -json` and `terraform show -json` of the saved plan for
// the create, the plan after it (no change) and the destroy, and `terraform
// show -json` of the state after the create. The provider's log shows that
// each run's plugin processes took the path asked for.
func TestAccExamples_fastPathOnAndOff(t *testing.T) {
	acctest.PreCheck(t)
	root := repoRoot(t)
	st := startStack(t, root)
	cfg, err := testenv.RESTConfig(st.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := cluster{dyn: dynamic.NewForConfigOrDie(cfg), cs: kubernetes.NewForConfigOrDie(cfg)}
	rc := cliConfig(t)
	bin := terraformBin(t)

	var plans, shows int
	for _, name := range fastPathExamples {
		ok := t.Run(name, func(t *testing.T) {
			runs := map[string]tfjsoncmp.Run{}
			for _, mode := range []string{"on", "off"} {
				if !t.Run(provider.FastPathVar+"="+mode, func(t *testing.T) {
					runs[mode] = applyExampleWith(t, c, st, rc, bin, name, mode)
				}) {
					t.FailNow() // the other run would fail on this one's leftovers
				}
			}
			p, s := tfjsoncmp.Compare(t, runs["on"], runs["off"], "the fast path on", "off")
			plans += p
			shows += s
		})
		if !ok {
			return
		}
	}
	t.Logf("compared %d plan -json streams and %d show -json outputs of %d examples with the fast path on and off: identical after normalisation",
		plans, shows, len(fastPathExamples))
}

// applyExampleWith applies, checks and destroys the example name with the
// fast path on or off, recording Terraform's JSON of every step.
func applyExampleWith(t *testing.T, c cluster, st *demo.Stack, rc, bin, name, mode string) tfjsoncmp.Run {
	dir := filepath.Join(copyExamples(t), name)
	tf := newTFDir(t, dir, rc)
	tf.bin = bin
	logPath := filepath.Join(t.TempDir(), "provider.log")
	tf.setEnv(provider.FastPathVar, mode)
	tf.setEnv("TF_LOG_PROVIDER", "INFO")
	tf.setEnv("TF_LOG_PATH", logPath)
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
	tf.must("get")

	var run tfjsoncmp.Run
	norm := tfjsoncmp.New(exampleRules)
	// show records `terraform show -json [file]` (a saved plan, or the
	// state without one).
	show := func(step string, file ...string) {
		t.Helper()
		s, err := norm.Show([]byte(tf.must(append([]string{"show", "-json"}, file...)...)))
		if err != nil {
			t.Fatal(err)
		}
		run.Add(step+": show -json", s)
	}
	// plan records the stream of `terraform plan -json` and the saved
	// plan's show -json, and returns the plan's file.
	plan := func(step string, args ...string) string {
		t.Helper()
		file := strings.ReplaceAll(step, " ", "-") + ".tfplan"
		s, err := norm.Stream([]byte(tf.must(append([]string{"plan", "-json", "-input=false", "-out=" + file}, args...)...)))
		if err != nil {
			t.Fatal(err)
		}
		run.Add(step+": plan -json", s)
		show(step+" (saved plan)", file)
		return file
	}

	create := plan("create")
	tf.must("apply", "-input=false", create)
	check.applied(t, c, st, tf, tf.outputs())
	show("state after the create")
	plan("plan after the create")
	destroy := plan("destroy", "-destroy")
	tf.must("apply", "-input=false", destroy)
	check.destroyed(t, c, st)
	// The example keeps the CRDs on destroy; the next run must start
	// where this one did, on a stand-in without them (the cluster data
	// source lists the served sandbox APIs at plan).
	removeCRDs(t, c)

	acctest.CheckFastPathLog(t, logPath, mode == "on")
	t.Logf("normalisations applied: %s", strings.Join(norm.Applied(), "; "))
	return run
}

var gvrCRD = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// removeCRDs deletes agent-sandbox's CRDs and waits until they are gone.
func removeCRDs(t *testing.T, c cluster) {
	t.Helper()
	crds := c.dyn.Resource(gvrCRD)
	for _, name := range sandboxapi.CRDNames() {
		if err := crds.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting CRD %s: %v", name, err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range sandboxapi.CRDNames() {
		for {
			_, err := crds.Get(t.Context(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				t.Fatalf("get CRD %s: %v", name, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s still there a minute after its deletion", name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
