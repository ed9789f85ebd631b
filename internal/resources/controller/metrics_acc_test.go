package controller_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

var (
	serviceMonitorGVR = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
	prometheusRuleGVR = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}
)

// monitoringCRD is a minimal stand-in for the Prometheus Operator's CRD of
// kind: the same group, version, names and scope as upstream's
// (example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml
// and _prometheusrules.yaml in github.com/prometheus-operator/prometheus-operator),
// with an open schema: what the resource needs of them is that the kinds
// are served.
func monitoringCRD(kind, plural string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".monitoring.coreos.com"},
		"spec": map[string]any{
			"group": "monitoring.coreos.com", "scope": "Namespaced",
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": plural[:len(plural)-1]},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
}

// TestAccController_metricsObjects: metrics objects are refused at plan
// while the Prometheus Operator's CRDs are not served (nothing applied);
// with the CRDs, the ServiceMonitor and PrometheusRule are created as the
// chart renders them, changed in place, and one removed from the
// configuration is deleted; an empty plan after each apply.
func TestAccController_metricsObjects(t *testing.T) {
	rs := newReleaseServer(t)
	dyn := acctest.Dynamic(t)
	both := `
  metrics = {
    service_monitor = { labels = { release = "kube-prometheus-stack" }, interval = "15s" }
    prometheus_rule = {
      labels            = { release = "kube-prometheus-stack" }
      additional_groups = jsonencode([{ name = "sandbox.rules", rules = [{ alert = "SandboxControllerAbsent", expr = "absent(up{job=\"agent-sandbox-controller\"})" }] }])
    }
  }`
	onlyMonitor := `
  metrics = {
    service_monitor = { scrape_timeout = "10s" }
  }`
	get := func(gvr schema.GroupVersionResource) (*unstructured.Unstructured, error) {
		return dyn.Resource(gvr).Namespace(controllerNS).Get(context.Background(), controllerName, metav1.GetOptions{})
	}
	installCRDs := func() {
		ctx := context.Background()
		for _, crd := range []*unstructured.Unstructured{monitoringCRD("ServiceMonitor", "servicemonitors"), monitoringCRD("PrometheusRule", "prometheusrules")} {
			if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create CRD %s: %v", crd.GetName(), err)
			}
			name := crd.GetName()
			t.Cleanup(func() { _ = dyn.Resource(crdGVR).Delete(context.Background(), name, metav1.DeleteOptions{}) })
		}
		acctest.WaitFor(t, time.Minute, "monitoring CRDs served", func(ctx context.Context) (bool, string, error) {
			for _, gvr := range []schema.GroupVersionResource{serviceMonitorGVR, prometheusRuleGVR} {
				_, err := dyn.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
				if apierrors.IsNotFound(err) {
					return false, gvr.Resource + " not served yet", nil
				}
				if err != nil {
					return false, "", err
				}
			}
			return true, "", nil
		})
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// No CRDs: refused at plan, on the attribute, nothing applied.
			Config:      configRelease(rs.URL, "v1.0.3", both),
			ExpectError: regexp.MustCompile(`(?s)Prometheus Operator CRDs not installed.*monitoring\.coreos\.com/v1 ServiceMonitor.*remove metrics\.service_monitor`),
			PlanOnly:    true,
		}, {
			PreConfig:        installCRDs,
			Config:           configRelease(rs.URL, "v1.0.3", both),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: func(*terraform.State) error {
				sm, err := get(serviceMonitorGVR)
				if err != nil {
					return err
				}
				ep, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
				sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
				if fmt.Sprint(ep) != "[map[interval:15s path:/metrics port:metrics scheme:http]]" || fmt.Sprint(sel) != "map[app:agent-sandbox-controller]" ||
					sm.GetLabels()["release"] != "kube-prometheus-stack" {
					return fmt.Errorf("ServiceMonitor: endpoints %v, selector %v, labels %v", ep, sel, sm.GetLabels())
				}
				pr, err := get(prometheusRuleGVR)
				if err != nil {
					return err
				}
				groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
				if len(groups) != 2 || groups[0].(map[string]any)["name"] != "agent-sandbox-controller.rules" || groups[1].(map[string]any)["name"] != "sandbox.rules" {
					return fmt.Errorf("PrometheusRule groups %v", groups)
				}
				return nil
			},
		}, {
			// The rule removed from the configuration is deleted; the
			// monitor changed in place.
			Config: configRelease(rs.URL, "v1.0.3", onlyMonitor),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: func(*terraform.State) error {
				if _, err := get(prometheusRuleGVR); !apierrors.IsNotFound(err) {
					return fmt.Errorf("PrometheusRule after its removal from the configuration: %w", err)
				}
				sm, err := get(serviceMonitorGVR)
				if err != nil {
					return err
				}
				ep, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
				if fmt.Sprint(ep) != "[map[interval:30s path:/metrics port:metrics scheme:http scrapeTimeout:10s]]" {
					return fmt.Errorf("ServiceMonitor endpoints %v", ep)
				}
				return nil
			},
		}},
	})
}
