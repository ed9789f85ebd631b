package controller

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// helmMetricsObjects reads what `helm template` renders from
// testdata/chartargs/metrics.yaml (metrics.objects.yaml, checked against
// the real Helm CLI by TestAccController_chartArgsMatchHelm), by kind, and
// the chart values it was rendered from.
func helmMetricsObjects(t *testing.T) (map[string]map[string]any, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "chartargs", "metrics.objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o != nil {
			out[o["kind"].(string)] = o
		}
	}
	values, err := os.ReadFile(filepath.Join("testdata", "chartargs", "metrics.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Metrics map[string]any `json:"metrics"`
	}
	if err := yaml.Unmarshal(values, &v); err != nil {
		t.Fatal(err)
	}
	return out, v.Metrics
}

func stringMap(t *testing.T, v any) types.Map {
	t.Helper()
	elems := map[string]attr.Value{}
	for k, e := range v.(map[string]any) {
		elems[k] = types.StringValue(e.(string))
	}
	m, d := types.MapValue(types.StringType, elems)
	if d.HasError() {
		t.Fatal(d)
	}
	return m
}

// TestAddMetricsObjectsAsTheChart: with the same values, the ServiceMonitor's
// endpoints and the PrometheusRule's groups are the chart's, and the
// additional labels are on both. The selector and the base labels are the
// release's (`app: agent-sandbox-controller`, the labels of its metrics
// Service), not the chart's app.kubernetes.io/* ones.
func TestAddMetricsObjectsAsTheChart(t *testing.T) {
	helm, values := helmMetricsObjects(t)
	sm := values["serviceMonitor"].(map[string]any)
	pr := values["prometheusRule"].(map[string]any)
	groups, err := json.Marshal(pr["additionalGroups"])
	if err != nil {
		t.Fatal(err)
	}
	objs := bundleObjects(t, "v1.0.3", assetAll)
	n := len(objs)
	objs, err = addMetricsObjects(t.Context(), objs, metricsSettings{
		ServiceMonitor: &serviceMonitorModel{Labels: stringMap(t, sm["additionalLabels"]),
			Interval: types.StringValue(sm["interval"].(string)), ScrapeTimeout: types.StringValue(sm["scrapeTimeout"].(string))},
		PrometheusRule: &prometheusRuleModel{Labels: stringMap(t, pr["additionalLabels"]), AdditionalGroups: types.StringValue(string(groups))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != n+2 {
		t.Fatalf("%d objects added, want 2", len(objs)-n)
	}
	for _, o := range objs[n:] {
		kind := o.GetKind()
		want := helm[kind]
		if o.GetAPIVersion() != want["apiVersion"] || o.GetName() != "agent-sandbox-controller" || o.GetNamespace() != "agent-sandbox-system" {
			t.Errorf("%s: %s %s/%s", kind, o.GetAPIVersion(), o.GetNamespace(), o.GetName())
		}
		if l := o.GetLabels(); l["release"] != "kube-prometheus-stack" || l["app"] != "agent-sandbox-controller" {
			t.Errorf("%s: labels %v", kind, l)
		}
		got := normalize(t, o.Object["spec"])
		wantSpec := normalize(t, want["spec"])
		if kind == "ServiceMonitor" {
			if sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels"); !reflect.DeepEqual(sel, map[string]string{"app": "agent-sandbox-controller"}) {
				t.Errorf("ServiceMonitor selects %v, not the release's metrics Service", sel)
			}
			got, wantSpec = got.(map[string]any)["endpoints"], wantSpec.(map[string]any)["endpoints"]
		}
		if !reflect.DeepEqual(got, wantSpec) {
			g, _ := json.MarshalIndent(got, "", "  ")
			w, _ := json.MarshalIndent(wantSpec, "", "  ")
			t.Errorf("%s: rendered\n%s\nhelm template renders\n%s", kind, g, w)
		}
	}

	// Unset interval: the chart's default; nothing asked, nothing added.
	objs = bundleObjects(t, "v1.0.3", assetAll)
	objs, err = addMetricsObjects(t.Context(), objs, metricsSettings{ServiceMonitor: &serviceMonitorModel{Labels: types.MapNull(types.StringType)}})
	if err != nil {
		t.Fatal(err)
	}
	if ep, _, _ := unstructured.NestedSlice(objs[len(objs)-1].Object, "spec", "endpoints"); ep[0].(map[string]any)["interval"] != "30s" {
		t.Errorf("default interval: %v", ep)
	}
	if again, _ := addMetricsObjects(t.Context(), objs[:n], metricsSettings{}); len(again) != n {
		t.Errorf("no metrics asked, %d objects added", len(again)-n)
	}
	if _, err := addMetricsObjects(t.Context(), objs[:3], metricsSettings{ServiceMonitor: &serviceMonitorModel{}}); err == nil || !strings.Contains(err.Error(), "no Deployment") {
		t.Errorf("a manifest without the controller: %v", err)
	}
}

func normalize(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
