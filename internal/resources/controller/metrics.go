package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// The chart's metrics objects (helm/values.yaml `metrics.*` at v1.0.3): a
// Prometheus Operator ServiceMonitor (helm/templates/servicemonitor.yaml)
// and PrometheusRule (helm/templates/prometheusrule.yaml), rendered only
// when asked, for the release's metrics Service agent-sandbox-controller
// (k8s/controller.yaml:34-49 at v1.0.3, the same in every release: label
// and selector `app: agent-sandbox-controller`, port `metrics`). Their
// kinds are the Prometheus Operator's CRDs, which the plan checks are
// served.

// monitoringAPIVersion is the Prometheus Operator's API group and version.
const monitoringAPIVersion = "monitoring.coreos.com/v1"

var (
	serviceMonitorGVK = k8sschema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	prometheusRuleGVK = k8sschema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRule"}
)

// metricsServiceName is the release's metrics Service (the chart's
// default service.name).
const metricsServiceName = ControllerDeploymentName

// chartRuleGroup is the name of the chart's starter rule group
// (helm/templates/prometheusrule.yaml:14).
const chartRuleGroup = "agent-sandbox-controller.rules"

// promDurationRE is the Prometheus Operator's Duration pattern
// (pkg/apis/monitoring/v1/types.go, `+kubebuilder:validation:Pattern`).
var promDurationRE = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

func promDuration() validator.String {
	return validators.Valid("Invalid Prometheus duration",
		"must be a Prometheus duration such as 30s, 1m or 1h30m (units ms, s, m, h, d, w, y; no spaces or fractions)",
		func(s string) bool { return s != "" && promDurationRE.MatchString(s) })
}

// metricsAttribute is the top-level `metrics`.
func metricsAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Prometheus Operator objects for the controller's metrics Service (`" + metricsServiceName + "`, port " +
			"`metrics`), as upstream's chart renders them with `metrics.serviceMonitor.enabled` and " +
			"`metrics.prometheusRule.enabled`. Their kinds are the Prometheus Operator's CRDs (`" + monitoringAPIVersion + "`): the " +
			"plan reads the cluster's API and is refused when they are not served. In the inventory like every other object: " +
			"removing one deletes it.",
		Attributes: map[string]schema.Attribute{
			"service_monitor": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "A ServiceMonitor `" + metricsServiceName + "` that scrapes `/metrics` over HTTP on the Service's `metrics` port.",
				Attributes: map[string]schema.Attribute{
					"labels": labelsAttribute("Labels added to the ServiceMonitor (the chart's `additionalLabels`), e.g. `{ release = \"kube-prometheus-stack\" }` for a Prometheus whose `serviceMonitorSelector` selects by it."),
					"interval": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Scrape interval, a Prometheus duration. Unset: `30s`, the chart's default.",
						Validators:          []validator.String{promDuration()},
					},
					"scrape_timeout": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Scrape timeout, a Prometheus duration. Unset: Prometheus' default.",
						Validators:          []validator.String{promDuration()},
					},
				},
			},
			"prometheus_rule": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "A PrometheusRule `" + metricsServiceName + "` with the chart's starter alert " +
					"`AgentSandboxControllerMetricsTargetsDown` (no metrics target of the Service scraped for 5 minutes).",
				Attributes: map[string]schema.Attribute{
					"labels": labelsAttribute("Labels added to the PrometheusRule (the chart's `additionalLabels`), e.g. for a Prometheus whose `ruleSelector` selects by them."),
					"additional_groups": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "Rule groups appended after the chart's (the chart's `additionalGroups`), as JSON: " +
							"`jsonencode([{ name = \"my.rules\", rules = [{ alert = \"...\", expr = \"...\" }] }])`. Each group needs a " +
							"`name` (unique, not `" + chartRuleGroup + "`) and a non-empty `rules` list.",
						Validators: []validator.String{ruleGroupsValid},
					},
				},
			},
		},
	}
}

type metricsModel struct {
	ServiceMonitor types.Object `tfsdk:"service_monitor"`
	PrometheusRule types.Object `tfsdk:"prometheus_rule"`
}

type serviceMonitorModel struct {
	Labels        types.Map    `tfsdk:"labels"`
	Interval      types.String `tfsdk:"interval"`
	ScrapeTimeout types.String `tfsdk:"scrape_timeout"`
}

type prometheusRuleModel struct {
	Labels           types.Map    `tfsdk:"labels"`
	AdditionalGroups types.String `tfsdk:"additional_groups"`
}

// ruleGroupsValid refuses additional_groups that Prometheus would not
// load as rule groups.
var ruleGroupsValid = validators.Check{
	Summary: "Invalid rule groups",
	Desc:    "must be a JSON list of Prometheus rule groups, each with a unique name and rules",
	Problem: func(s string) string {
		if _, err := parseRuleGroups(s); err != nil {
			return err.Error() + ".\n\nGive a list of rule groups as JSON: jsonencode([{ name = \"my.rules\", rules = [{ alert = \"X\", expr = \"up == 0\" }] }])."
		}
		return ""
	},
}

func parseRuleGroups(s string) ([]any, error) {
	var groups []any
	if err := json.Unmarshal([]byte(s), &groups); err != nil {
		return nil, fmt.Errorf("not a JSON list: %w", err)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("an empty list: remove additional_groups instead")
	}
	seen := map[string]bool{chartRuleGroup: true}
	for i, g := range groups {
		m, ok := g.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("group %d is not an object", i)
		}
		name, _ := m["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("group %d has no name", i)
		}
		if seen[name] {
			return nil, fmt.Errorf("group %d: the name %q is taken (by the chart's starter group or another group); Prometheus refuses duplicate group names", i, name)
		}
		seen[name] = true
		rules, _ := m["rules"].([]any)
		if len(rules) == 0 {
			return nil, fmt.Errorf("group %q has no rules", name)
		}
	}
	return groups, nil
}

// metricsSettings are `metrics`, expanded; nil maps mean no object.
type metricsSettings struct {
	ServiceMonitor *serviceMonitorModel
	PrometheusRule *prometheusRuleModel
}

func (m *controllerModel) metrics(ctx context.Context) (metricsSettings, diag.Diagnostics) {
	var out metricsSettings
	var diags diag.Diagnostics
	if m.Metrics.IsNull() || m.Metrics.IsUnknown() {
		return out, diags
	}
	var mm metricsModel
	diags.Append(m.Metrics.As(ctx, &mm, objectAsOptions)...)
	if !mm.ServiceMonitor.IsNull() && !mm.ServiceMonitor.IsUnknown() {
		out.ServiceMonitor = &serviceMonitorModel{}
		diags.Append(mm.ServiceMonitor.As(ctx, out.ServiceMonitor, objectAsOptions)...)
	}
	if !mm.PrometheusRule.IsNull() && !mm.PrometheusRule.IsUnknown() {
		out.PrometheusRule = &prometheusRuleModel{}
		diags.Append(mm.PrometheusRule.As(ctx, out.PrometheusRule, objectAsOptions)...)
	}
	return out, diags
}

// addMetricsObjects appends the ServiceMonitor and PrometheusRule s asks
// for, for the bundle's metrics Service.
func addMetricsObjects(ctx context.Context, objs []object, s metricsSettings) ([]object, error) {
	if s.ServiceMonitor == nil && s.PrometheusRule == nil {
		return objs, nil
	}
	dep := findControllerDeployment(objs)
	if dep == nil {
		return objs, fmt.Errorf("the manifest has no Deployment named %q, whose metrics Service the metrics objects select", ControllerDeploymentName)
	}
	ns := dep.GetNamespace()
	var svc *object
	for i := range objs {
		if objs[i].GetKind() == "Service" && objs[i].GetAPIVersion() == "v1" && objs[i].GetName() == metricsServiceName && objs[i].GetNamespace() == ns {
			svc = &objs[i]
		}
	}
	if svc == nil {
		return objs, fmt.Errorf("the manifest has no Service %s/%s, the controller's metrics Service every release has (k8s/controller.yaml); "+
			"the metrics objects select it", ns, metricsServiceName)
	}
	selector, _, _ := unstructured.NestedStringMap(svc.Object, "metadata", "labels")
	if len(selector) == 0 {
		return objs, fmt.Errorf("%s: the Service %s/%s has no labels to select it by", svc.where(), ns, metricsServiceName)
	}
	labelsWith := func(extra types.Map) map[string]any {
		out := toAnyMap(selector)
		var l map[string]string
		if !extra.IsNull() {
			_ = extra.ElementsAs(ctx, &l, false)
		}
		maps.Copy(out, toAnyMap(l))
		return out
	}
	meta := func(labels map[string]any) map[string]any {
		return map[string]any{"name": metricsServiceName, "namespace": ns, "labels": labels}
	}
	if sm := s.ServiceMonitor; sm != nil {
		endpoint := map[string]any{"port": "metrics", "path": "/metrics", "scheme": "http", "interval": "30s"}
		if v := sm.Interval.ValueString(); v != "" {
			endpoint["interval"] = v
		}
		if v := sm.ScrapeTimeout.ValueString(); v != "" {
			endpoint["scrapeTimeout"] = v
		}
		objs = append(objs, object{Unstructured: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": monitoringAPIVersion, "kind": "ServiceMonitor",
			"metadata": meta(labelsWith(sm.Labels)),
			"spec": map[string]any{
				"selector":  map[string]any{"matchLabels": toAnyMap(selector)},
				"endpoints": []any{endpoint},
			},
		}}, Source: "metrics.service_monitor", Doc: 1, Line: 1})
	}
	if pr := s.PrometheusRule; pr != nil {
		target := fmt.Sprintf(`up{namespace=%q, service=%q}`, ns, metricsServiceName)
		groups := []any{map[string]any{
			"name": chartRuleGroup,
			"rules": []any{map[string]any{
				"alert":  "AgentSandboxControllerMetricsTargetsDown",
				"expr":   "absent(" + target + ") or\nmax by (namespace, service) (" + target + ") < 1\n",
				"for":    "5m",
				"labels": map[string]any{"severity": "warning"},
				"annotations": map[string]any{
					"summary":     "Agent Sandbox controller metrics targets are down",
					"description": "Prometheus has been unable to scrape any " + metricsServiceName + " metrics target for 5 minutes.",
				},
			}},
		}}
		if v := pr.AdditionalGroups.ValueString(); v != "" {
			extra, err := parseRuleGroups(v)
			if err != nil {
				return objs, err // refused at validate already
			}
			groups = append(groups, extra...)
		}
		objs = append(objs, object{Unstructured: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": monitoringAPIVersion, "kind": "PrometheusRule",
			"metadata": meta(labelsWith(pr.Labels)),
			"spec":     map[string]any{"groups": groups},
		}}, Source: "metrics.prometheus_rule", Doc: 1, Line: 1})
	}
	return objs, nil
}

// checkMonitoringServed refuses, at plan, metrics objects whose kinds the
// cluster does not serve. A cluster that cannot be reached while planning
// (say, created in the same apply) is left to the apply's preflight, which
// refuses an unserved kind before any write.
func (r *controllerResource) checkMonitoringServed(ctx context.Context, s metricsSettings, diags *diag.Diagnostics) {
	if s.ServiceMonitor == nil && s.PrometheusRule == nil {
		return
	}
	c, d := r.Meta.Kube(ctx)
	if d.HasError() {
		return
	}
	for _, k := range []struct {
		attr string
		gvk  k8sschema.GroupVersionKind
		set  bool
	}{{"service_monitor", serviceMonitorGVK, s.ServiceMonitor != nil}, {"prometheus_rule", prometheusRuleGVK, s.PrometheusRule != nil}} {
		if !k.set {
			continue
		}
		_, err := c.MappingFor(ctx, k.gvk)
		switch {
		case err == nil:
		case kube.IsResourceNotServed(err):
			diags.AddAttributeError(path.Root("metrics").AtName(k.attr), "Prometheus Operator CRDs not installed",
				fmt.Sprintf("The cluster does not serve %s %s: the Prometheus Operator's CRDs (monitoring.coreos.com) are not "+
					"installed, so the %s cannot be created. Nothing was applied.\n\nInstall the Prometheus Operator first (for "+
					"example the kube-prometheus-stack chart, or its CRDs alone: `kubectl apply --server-side -f` the "+
					"stripped-down-crds.yaml of a prometheus-operator release), then plan again; or remove metrics.%s.",
					monitoringAPIVersion, k.gvk.Kind, k.gvk.Kind, k.attr))
		default:
			diags.Append(kube.Diagnostics(err, "discover", kube.ObjectRef{Kind: k.gvk.Kind, Name: metricsServiceName})...)
		}
	}
}
