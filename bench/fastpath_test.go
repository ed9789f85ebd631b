package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/tfjsoncmp"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// benchRules are the normalisations of the benchmark configuration's
// outputs (package tfjsoncmp) beyond its own (times, the order of
// concurrent messages): what two runs of it, one after the other in the
// same namespace, legitimately disagree on. Nothing of the objects: the
// configuration's attributes hold nothing the cluster assigns.
var benchRules = tfjsoncmp.Rules{
	// The harness's, not the configuration's (its detail lists the
	// overrides in map order).
	IgnoreDiagnostics: []string{"Provider development overrides are in effect"},
}

// TestFastPathOnAndOff runs the benchmark's configuration of this provider
// (setsConfig: n sets of a template, a warm pool and a network policy)
// through every phase the benchmark measures that plans, with the fast
// path (AGENTSANDBOX_FASTPATH=on) and without it (off), one run after the
// other in one namespace, and requires Terraform's own view of each step to
// be identical, normalised only as benchRules says: the stream of `terraform
// plan -json` and `terraform show -json` of the saved plan for the create,
// the plan after it (no change), the update of every object (the label
// bench/gen) and the destroy, and `terraform show -json` of the state after
// the create and after the update. The provider's log shows each run took
// the path asked for.
func TestFastPathOnAndOff(t *testing.T) {
	acctest.PreCheck(t)
	const n = 3
	ns := acctest.Namespace(t)
	runs := map[string]tfjsoncmp.Run{}
	for _, mode := range []string{"on", "off"} {
		if !t.Run(provider.FastPathVar+"="+mode, func(t *testing.T) { runs[mode] = runSetsWith(t, ns, n, mode) }) {
			t.FailNow() // the other run would fail on this one's leftovers
		}
	}
	plans, shows := tfjsoncmp.Compare(t, runs["on"], runs["off"], "the fast path on", "off")
	t.Logf("compared %d plan -json streams and %d show -json outputs of the benchmark's configuration (n=%d) with the fast path on and off: identical after normalisation",
		plans, shows, n)
}

// runSetsWith creates, updates and destroys n sets with the fast path on
// or off, recording Terraform's JSON of every step.
func runSetsWith(t *testing.T, ns string, n int, mode string) tfjsoncmp.Run {
	w := acctest.NewTFWork(t)
	logPath := filepath.Join(t.TempDir(), "provider.log")
	w.Env = append(w.Env, provider.FastPathVar+"="+mode, "TF_LOG_PROVIDER=INFO", "TF_LOG_PATH="+logPath)
	w.Write(setsConfig(kindAgentsandbox, provider.RegistryAddress, providerOpts{}))
	must := func(args ...string) string {
		t.Helper()
		out, code := w.Run(args...)
		if code != 0 {
			t.Fatalf("terraform %s: exit status %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	vars := func(gen int) []string {
		return []string{"-var", fmt.Sprintf("n=%d", n), "-var", fmt.Sprintf("gen=%d", gen), "-var", "namespace=" + ns,
			"-var", "kubeconfig=" + acctest.Kubeconfig()}
	}

	var run tfjsoncmp.Run
	norm := tfjsoncmp.New(benchRules)
	show := func(step string, file ...string) {
		t.Helper()
		s, err := norm.Show([]byte(must(append([]string{"show", "-json"}, file...)...)))
		if err != nil {
			t.Fatal(err)
		}
		run.Add(step+": show -json", s)
	}
	plan := func(step string, args ...string) string {
		t.Helper()
		file := strings.ReplaceAll(step, " ", "-") + ".tfplan"
		s, err := norm.Stream([]byte(must(append([]string{"plan", "-json", "-input=false", "-out=" + file}, args...)...)))
		if err != nil {
			t.Fatal(err)
		}
		run.Add(step+": plan -json", s)
		show(step+" (saved plan)", file)
		return file
	}

	must("apply", "-input=false", plan("create", vars(1)...))
	show("state after the create")
	plan("plan after the create", vars(1)...)
	must("apply", "-input=false", plan("update", vars(2)...))
	show("state after the update")
	must("apply", "-input=false", plan("destroy", append(vars(2), "-destroy")...))
	acctest.CheckFastPathLog(t, logPath, mode == "on")
	t.Logf("normalisations applied: %s", strings.Join(norm.Applied(), "; "))
	return run
}
