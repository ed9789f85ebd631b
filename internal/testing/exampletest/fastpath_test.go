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

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/demo"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/tfjsoncmp"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

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

// applyExamplesBothWays applies each example twice on the stand-in st,
// with the fast path (AGENTSANDBOX_FASTPATH=on) and without it (off), each
// time with every check of applyExamples (no warning at the first plan,
// what it made, no failed check, an empty plan after the apply, what its
// destroy left), and requires Terraform's own view of each step to be
// identical, normalised only as exampleRules says: the stream of `terraform
// plan -json` and `terraform show -json` of the saved plan for the create,
// the plan after it (no change) and the destroy, and `terraform show -json`
// of the state after the create. The provider's log shows that each run's
// plugin processes took the path asked for.
func applyExamplesBothWays(t *testing.T, c cluster, st *demo.Stack, rc, bin string) {
	var plans, shows int
	for _, name := range exampleDirs {
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
		plans, shows, len(exampleDirs))
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
	// plan's show -json, and returns the plan's file and the stream as
	// Terraform wrote it. -detailed-exitcode: exit status 2 means changes.
	plan := func(step string, args ...string) (file, out string, changes bool) {
		t.Helper()
		file = strings.ReplaceAll(step, " ", "-") + ".tfplan"
		out, code := tf.run(append([]string{"plan", "-json", "-input=false", "-detailed-exitcode", "-out=" + file}, args...)...)
		if code != 0 && code != 2 {
			t.Fatalf("terraform plan (%s) failed (exit status %d):\n%s", step, code, out)
		}
		s, err := norm.Stream([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		run.Add(step+": plan -json", s)
		show(step+" (saved plan)", file)
		return file, out, code == 2
	}

	create, out, _ := plan("create")
	// The first plan of an example (objects that name each other, created
	// in one apply) gives no warning: a plan cannot tell a template, warm
	// pool or namespace created in the same apply from a typo, so it does
	// not look them up (object.Lookup).
	if w := warningsIn(out); len(w) > 0 {
		t.Errorf("the first plan of %s gives %d warnings, want none:\n  %s", name, len(w), strings.Join(w, "\n  "))
	}
	t0 := time.Now()
	out = tf.must("apply", "-input=false", create)
	t.Logf("%s applied in %s", name, time.Since(t0).Round(time.Millisecond))
	if strings.Contains(out, checkFailed) {
		t.Errorf("the apply of %s fails a check:\n%s", name, out)
	}
	check.applied(t, c, st, tf, tf.outputs())
	show("state after the create")
	if _, out, changes := plan("plan after the create"); changes {
		t.Fatalf("the plan after apply is not empty:\n%s", out)
	} else if strings.Contains(out, checkFailed) || strings.Contains(out, checkDeferred) {
		// Everything a check reads exists now: it is decided at plan,
		// and holds.
		t.Errorf("the plan after the apply of %s does not pass its checks:\n%s", name, out)
	}
	destroy, _, _ := plan("destroy", "-destroy")
	t0 = time.Now()
	tf.must("apply", "-input=false", destroy)
	t.Logf("%s destroyed in %s", name, time.Since(t0).Round(time.Millisecond))
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
