package controller_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/realcontroller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/controller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccController_chartArgsMatchHelm keeps TestRenderFlagsAsTheChart
// true: the real Helm v4 CLI renders upstream's chart (the module
// sigs.k8s.io/agent-sandbox@v1.0.3, helm/) with each values file of
// testdata/chartargs into exactly the args of its .args file. Then the
// real v1.0.3 controller parses the args: those the typed values render
// (every flag it has, with --version, which exits after parsing), and the
// chart's own rendering of its commented defaults, whose
// --pprof-block-profile-rate=1e+06 it refuses. And Helm renders the
// metrics objects of metrics.yaml into metrics.objects.yaml.
func TestAccController_chartArgsMatchHelm(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	helm := buildHelm(t, root)
	chart := moduleDir(t, "sigs.k8s.io/agent-sandbox@v1.0.3") + "/helm"
	bin, err := realcontroller.Build(t.Context(), realcontroller.DefaultCacheDir(root), "v1.0.3", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(args []string) (string, error) {
		out, err := exec.CommandContext(t.Context(), bin.Path, append(slices.Clone(args), "--version")...).CombinedOutput()
		return string(out), err
	}
	for _, name := range []string{"every-value", "commented-defaults"} {
		out, err := exec.CommandContext(t.Context(), helm, "template", "agent-sandbox", chart,
			"-f", filepath.Join("testdata", "chartargs", name+".yaml"), "--set", "image.tag=v1.0.3",
			"--show-only", "templates/deployment.yaml").Output()
		if err != nil {
			t.Fatalf("helm template -f %s.yaml: %v", name, err)
		}
		var dep appsv1.Deployment
		if err := yaml.Unmarshal(out, &dep); err != nil {
			t.Fatalf("helm template -f %s.yaml: %v\n%s", name, err, out)
		}
		rendered, golden := controller.RenderedChartArgs(t, name)
		if got := dep.Spec.Template.Spec.Containers[0].Args; !slices.Equal(got, golden) {
			t.Errorf("%s: helm template renders\n  %s\ntestdata/chartargs/%s.args has\n  %s", name,
				strings.Join(got, "\n  "), name, strings.Join(golden, "\n  "))
		}
		if out, err := parse(rendered); err != nil {
			t.Errorf("%s: the real %s refuses the rendered args %v: %v\n%s", name, bin, rendered, err, out)
		}
		out2, err := parse(golden)
		switch {
		case name == "commented-defaults" && (err == nil || !strings.Contains(out2, `invalid value "1e+06" for flag -pprof-block-profile-rate`)):
			t.Errorf("%s: the real controller with helm's args: %v\n%s", name, err, out2)
		case name != "commented-defaults" && err != nil:
			t.Errorf("%s: the real controller refuses helm's args: %v\n%s", name, err, out2)
		}
	}
	// v1.0.3's metrics TLS flags as metrics_secure_serving and
	// metrics_cert_secret render them.
	tls := []string{"--metrics-secure-serving=true", "--metrics-cert-dir=/etc/metrics-certs"}
	if out, err := parse(tls); err != nil {
		t.Errorf("the real %s refuses %v: %v\n%s", bin, tls, err, out)
	}
	// The metrics objects TestAddMetricsObjectsAsTheChart compares with.
	out, err := exec.CommandContext(t.Context(), helm, "template", "agent-sandbox", chart, "-n", "agent-sandbox-system",
		"-f", filepath.Join("testdata", "chartargs", "metrics.yaml"), "--set", "image.tag=v1.0.3",
		"--show-only", "templates/servicemonitor.yaml", "--show-only", "templates/prometheusrule.yaml").Output()
	if err != nil {
		t.Fatalf("helm template -f metrics.yaml: %v", err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "chartargs", "metrics.objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(golden) {
		t.Errorf("helm template -f metrics.yaml renders\n%s\ntestdata/chartargs/metrics.objects.yaml has\n%s", out, golden)
	}
	t.Logf("%s parsed the rendered args of every typed value", bin)
}
