package controller

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// chartValue maps one value of upstream's Helm chart (helm/values.yaml at
// v1.0.3, and the values its templates read) to the resource: the
// attribute that does what it does, or why there is none, and the tests
// that show it.
type chartValue struct {
	Key   string
	Attr  string // "" when there is none
	Why   string // with Attr: how it differs; without: why there is none
	Tests []string
}

// chartValueTable is the table of the install guide's section "Every value
// of the chart" (TestEveryChartValueIsMapped keeps both true).
func chartValueTable() []chartValue {
	podOptions := []string{"TestAccController_chartPodOptions", "TestBadInputWideTable"}
	settings := []string{"TestAccController_imageRegistryAndControllerSettings", "TestBadInputWideTable"}
	metrics := []string{"TestAccController_metricsObjects", "TestAddMetricsObjectsAsTheChart"}
	metricsRows := append(slices.Clone(metrics), "TestBadInputWideTable")
	flags := []string{"TestAccController_chartControllerValues", "TestRenderFlagsAsTheChart", "TestAccController_chartArgsMatchHelm"}
	out := []chartValue{
		{Key: "namespace.create", Why: "the release's Namespace `agent-sandbox-system` is always applied (an existing one is taken over)", Tests: []string{"TestAccController_migrateFromHelmAndKubectl"}},
		{Key: "namespace.name", Why: "the namespace is the release's (read into `namespace`); another one takes a manifest of your own (`manifest`, `manifest_file`)", Tests: []string{"TestControllerNamespace"}},
		{Key: "nameOverride", Why: "the objects keep the release's names and labels (`app: agent-sandbox-controller`)", Tests: []string{"TestAccController_migrateFromHelmAndKubectl"}},
		{Key: "image.repository", Attr: "image_registry", Why: "the registry is replaced, the repository path kept", Tests: settings},
		{Key: "image.tag", Attr: "version", Why: "the release's own image tag", Tests: []string{"TestReleaseURLs", "TestAccController_upgradeV05ToV10"}},
		{Key: "image.pullPolicy", Attr: "controller.image_pull_policy", Tests: podOptions},
		{Key: "imagePullSecrets", Attr: "controller.image_pull_secrets", Why: "names only", Tests: podOptions},
		{Key: "replicaCount", Attr: "controller.replicas", Tests: settings},
		{Key: "podAnnotations", Attr: "controller.pod_annotations", Tests: podOptions},
		{Key: "podLabels", Attr: "controller.pod_labels", Why: "`app`, the release's selector label, refused", Tests: podOptions},
		{Key: "controller.extensions", Attr: "extensions", Why: "chooses the release's asset; default `true`, the chart's `false`", Tests: []string{"TestReleaseAssets"}},
		{Key: "controller.extraArgs", Attr: "controller.args", Why: "a flag a typed attribute sets is refused", Tests: []string{"TestApplyControllerSettings", "TestBadInputWideTable"}},
		{Key: "resources", Attr: "controller.resources", Tests: settings},
		{Key: "nodeSelector", Attr: "controller.node_selector", Tests: settings},
		{Key: "tolerations", Attr: "controller.tolerations", Tests: settings},
		{Key: "affinity", Attr: "controller.affinity", Why: "JSON, checked against Kubernetes' `Affinity`", Tests: podOptions},
		{Key: "podSecurityContext", Attr: "controller.pod_security_context", Why: "typed: the common fields", Tests: podOptions},
		{Key: "containerSecurityContext", Attr: "controller.container_security_context", Why: "typed: the common fields", Tests: podOptions},
		{Key: "service.name", Why: "the release's metrics Service is `agent-sandbox-controller` (k8s/controller.yaml:37 at v1.0.3); another name takes a manifest of your own", Tests: []string{"TestAccController_migrateFromHelmAndKubectl"}},
		{Key: "metrics.serviceMonitor.enabled", Attr: "metrics.service_monitor", Why: "set = enabled; refused at plan when the Prometheus Operator's CRDs are not served; selects the release's Service by `app`", Tests: metrics},
		{Key: "metrics.serviceMonitor.additionalLabels", Attr: "metrics.service_monitor.labels", Tests: metricsRows},
		{Key: "metrics.serviceMonitor.interval", Attr: "metrics.service_monitor.interval", Why: "default `30s` as the chart's", Tests: metricsRows},
		{Key: "metrics.serviceMonitor.scrapeTimeout", Attr: "metrics.service_monitor.scrape_timeout", Tests: metricsRows},
		{Key: "metrics.prometheusRule.enabled", Attr: "metrics.prometheus_rule", Why: "set = enabled, with the chart's starter alert", Tests: metrics},
		{Key: "metrics.prometheusRule.additionalLabels", Attr: "metrics.prometheus_rule.labels", Tests: metricsRows},
		{Key: "metrics.prometheusRule.additionalGroups", Attr: "metrics.prometheus_rule.additional_groups", Why: "JSON", Tests: metricsRows},
	}
	for _, f := range chartFlags {
		why := ""
		if f.Since != "" {
			why = "refused before " + f.Since
		}
		if f.Extensions {
			why = strings.TrimPrefix(why+"; refused with `extensions = false`", "; ")
		}
		if f.Value == "pprofBlockProfileRate" {
			why = "written in decimal: the chart renders 1000000 as `1e+06`, which the controller refuses"
		}
		out = append(out, chartValue{Key: "controller." + f.Value, Attr: "controller." + f.Attr, Why: why, Tests: flags})
	}
	return out
}

// chartValueKeys are the chart's values: every leaf of values.yaml (an
// empty map or list, null or a scalar), every value its templates read
// (.Values.x.y), and every key of controller its args template tests with
// hasKey (the typed values values.yaml only shows in comments).
func chartValueKeys(t *testing.T, chart string) []string {
	t.Helper()
	keys := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, e := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
			return
		}
		keys[prefix] = true
	}
	walk("", values)
	templates, err := filepath.Glob(filepath.Join(chart, "templates", "*"))
	if err != nil || len(templates) == 0 {
		t.Fatalf("no templates in %s (%v)", chart, err)
	}
	ref := regexp.MustCompile(`\.Values\.([A-Za-z0-9_.]+)`)
	hasKey := regexp.MustCompile(`hasKey \.Values\.controller "([A-Za-z0-9]+)"`)
	for _, p := range templates {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ref.FindAllSubmatch(src, -1) {
			keys[string(m[1])] = true
		}
		for _, m := range hasKey.FindAllSubmatch(src, -1) {
			keys["controller."+string(m[1])] = true
		}
	}
	// A map a template reads whole (.Values.controller in hasKey) is
	// covered by its keys.
	var out []string
	for k := range keys {
		inner := false
		for other := range keys {
			inner = inner || strings.HasPrefix(other, k+".")
		}
		if !inner {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// chartValueSection is the guide's table, rendered from chartValueTable.
func chartValueSection(table []chartValue) string {
	var b strings.Builder
	b.WriteString("| Chart value | `agentsandbox_controller` | Test |\n|---|---|---|\n")
	for _, v := range table {
		attr := "none: " + v.Why
		if v.Attr != "" {
			attr = "`" + v.Attr + "`"
			if v.Why != "" {
				attr += " (" + v.Why + ")"
			}
		}
		tests := make([]string, 0, len(v.Tests))
		for _, t := range v.Tests {
			tests = append(tests, "`"+t+"`")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Key, attr, strings.Join(tests, ", "))
	}
	return b.String()
}

// TestEveryChartValueIsMapped walks the chart's values (chartValueKeys)
// and fails on a value without a row in chartValueTable, on a row for a
// value the chart does not have, on a row naming a test this package does
// not have, and when the install guide's table is not chartValueTable's.
func TestEveryChartValueIsMapped(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", "sigs.k8s.io/agent-sandbox@v1.0.3").Output()
	if err != nil {
		t.Fatalf("go mod download: %v", err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download -json: %s (%v)", out, err)
	}
	keys := chartValueKeys(t, filepath.Join(info.Dir, "helm"))
	table := chartValueTable()
	mapped := map[string]bool{}
	for _, v := range table {
		mapped[v.Key] = true
		if !slices.Contains(keys, v.Key) {
			t.Errorf("chartValueTable maps %s, which the chart does not have", v.Key)
		}
		if v.Attr == "" && v.Why == "" {
			t.Errorf("%s: neither an attribute nor why there is none", v.Key)
		}
	}
	for _, k := range keys {
		if !mapped[k] {
			t.Errorf("the chart's value %s has no row in chartValueTable: map it to an attribute, or say why there is none", k)
		}
	}
	sources, _ := filepath.Glob("*_test.go")
	var all strings.Builder
	for _, s := range sources {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
	}
	for _, v := range table {
		for _, name := range v.Tests {
			if !strings.Contains(all.String(), "func "+name+"(") {
				t.Errorf("%s: the test %s is not in this package", v.Key, name)
			}
		}
	}
	const guide = "../../../templates/guides/controller-install-upgrade.md.tmpl"
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	want := chartValueSection(table)
	if os.Getenv("UPDATE_CHART_VALUES") != "" {
		re := regexp.MustCompile(`(?s)(<!-- chart-values:begin -->\n).*(<!-- chart-values:end -->)`)
		if !re.Match(data) {
			t.Fatalf("%s has no chart-values markers", guide)
		}
		data = re.ReplaceAll(data, []byte("${1}"+strings.ReplaceAll(want, "$", "$$")+"${2}"))
		if err := os.WriteFile(guide, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(string(data), "<!-- chart-values:begin -->\n"+want+"<!-- chart-values:end -->") {
		t.Errorf("%s: the table between the chart-values markers is not chartValueTable's; run "+
			"UPDATE_CHART_VALUES=1 go test -run TestEveryChartValueIsMapped ./internal/resources/controller, then make generate. Want:\n%s", guide, want)
	}
	t.Logf("%d values of the chart, %d with an attribute", len(keys), len(keys)-countNone(table))
}

func countNone(table []chartValue) int {
	n := 0
	for _, v := range table {
		if v.Attr == "" {
			n++
		}
	}
	return n
}
