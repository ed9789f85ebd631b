package controller_test

import (
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The bad-input table of agentsandbox_controller through the plugin
// protocol (issue 13): each refused at validate, on the exact attribute
// (including inside controller { ... }, which the CLI test in
// validate_test.go can only match by text), before anything is downloaded
// or sent to a cluster.
func TestBadInputWideTable(t *testing.T) {
	const typ = "agentsandbox_controller"
	c := func(kv ...any) map[string]any {
		cfg := map[string]any{"version": "v0.5.6"}
		for i := 0; i < len(kv); i += 2 {
			cfg[kv[i].(string)] = kv[i+1]
		}
		return cfg
	}
	ctl := func(k string, v any) map[string]any { return c("controller", map[string]any{k: v}) }
	tol := func(tl map[string]any) map[string]any { return ctl("tolerations", []any{tl}) }
	cases := []pt.BadInput{
		pt.Refused("version without v", c("version", "0.5.6"), "version", "release tag"),
		pt.Refused("version latest", c("version", "latest"), "version", "release tag"),
		pt.Refused("version with two parts", c("version", "v1.0"), "version", "release tag"),
		pt.Refused("empty version", c("version", ""), "version"),
		pt.Refused("sha256 too short", c("manifest", "kind: x", "manifest_sha256", "abc"), "manifest_sha256", "64 hexadecimal"),
		pt.Refused("sha256 with prefix", c("manifest", "kind: x", "manifest_sha256", "sha256:0123"), "manifest_sha256", "64 hexadecimal"),
		pt.Refused("manifest URL over ftp", c("manifest_url", "ftp://example.com/x.yaml"), "manifest_url", "http:// or https://"),
		pt.Refused("manifest URL without scheme", c("manifest_url", "example.com/x.yaml"), "manifest_url", "http:// or https://"),
		pt.Refused("release mirror without scheme", c("release_base_url", "mirror.example.com"), "release_base_url", "http:// or https://"),
		pt.Refused("empty inline manifest", c("manifest", ""), "manifest"),
		pt.Refused("empty manifest file", c("manifest_file", ""), "manifest_file"),
		pt.Refused("image registry as URL", c("image_registry", "https://mirror.example.com"), "image_registry", "registry host"),
		pt.Refused("flag without dashes", ctl("args", []any{"leader-elect=false"}), "controller.args[0]", "flag"),
		pt.Refused("negative replicas", ctl("replicas", -1), "controller.replicas", "between 0 and 100"),
		pt.Refused("fractional replicas", ctl("replicas", 1.5), "controller.replicas", "Not a whole number", "1 or 2"),
		pt.Refused("cpu request 100u", ctl("resources", map[string]any{"requests": map[string]any{"cpu": "100u"}}),
			`controller.resources.requests["cpu"]`, "finer than 1m", `cpu = "1m"`),
		pt.Refused("replicas 1000", ctl("replicas", 1000), "controller.replicas", "between 0 and 100"),
		pt.Refused("cpu as words", ctl("resources", map[string]any{"requests": map[string]any{"cpu": "lots"}}), `controller.resources.requests["cpu"]`, "Invalid quantity"),
		pt.Refused("memory in GB", ctl("resources", map[string]any{"limits": map[string]any{"memory": "1GB"}}), `controller.resources.limits["memory"]`, `"1Gi"`),
		pt.Refused("resource name with a space", ctl("resources", map[string]any{"limits": map[string]any{"not a name": "1"}}), `controller.resources.limits["not a name"]`, "resource name"),
		// The API server refuses a request above its limit
		// (ValidateResourceRequirements); the Deployment would fail at apply.
		pt.Refused("cpu request above its limit", ctl("resources", map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "500m"}}),
			`controller.resources.requests["cpu"]`, "more than its limit", "500m"),
		pt.Refused("node selector key with !", ctl("node_selector", map[string]any{"bad key!": "x"}), `controller.node_selector["bad key!"]`),
		pt.Refused("Exists with a value", tol(map[string]any{"key": "k", "operator": "Exists", "value": "v"}), "controller.tolerations[0].value", "Exists"),
		pt.Refused("toleration seconds without NoExecute", tol(map[string]any{"key": "k", "value": "v", "effect": "NoSchedule", "toleration_seconds": 5}),
			"controller.tolerations[0].toleration_seconds", "NoExecute"),
		pt.Refused("toleration without key but Equal", tol(map[string]any{"operator": "Equal", "value": "v"}), "controller.tolerations[0].key", "Exists"),
		pt.Refused("toleration key with a space", tol(map[string]any{"key": "dedicated node", "operator": "Exists"}), "controller.tolerations[0].key", `"dedicated node"`),
		pt.Refused("toleration value with a space", tol(map[string]any{"key": "dedicated", "value": "system pods"}), "controller.tolerations[0].value", `"system pods"`),
		pt.Refused("negative toleration seconds", tol(map[string]any{"key": "k", "operator": "Exists", "effect": "NoExecute", "toleration_seconds": -30}),
			"controller.tolerations[0].toleration_seconds", "at least 0"),
		pt.Refused("operator typo", tol(map[string]any{"key": "k", "operator": "Sometimes"}), "controller.tolerations[0].operator", "one of"),
		pt.Refused("effect in upper case", tol(map[string]any{"key": "k", "operator": "Exists", "effect": "NO_SCHEDULE"}), "controller.tolerations[0].effect"),
		pt.Refused("pull policy in lower case", ctl("image_pull_policy", "always"), "controller.image_pull_policy", "one of"),
		pt.Refused("pull secret with a capital", ctl("image_pull_secrets", []any{"Mirror"}), "controller.image_pull_secrets[0]"),
		pt.Refused("no pull secrets", ctl("image_pull_secrets", []any{}), "controller.image_pull_secrets", "at least 1"),
		pt.Refused("pod label key with a space", ctl("pod_labels", map[string]any{"my team": "x"}), `controller.pod_labels["my team"]`),
		pt.Refused("pod label app", ctl("pod_labels", map[string]any{"app": "x"}), `controller.pod_labels["app"]`, "selects its pods"),
		pt.Refused("pod annotation key with a space", ctl("pod_annotations", map[string]any{"a b": "x"}), `controller.pod_annotations["a b"]`),
		pt.Refused("negative pod UID", ctl("pod_security_context", map[string]any{"run_as_user": -1}), "controller.pod_security_context.run_as_user", "at least 0"),
		pt.Refused("negative pod GID", ctl("pod_security_context", map[string]any{"run_as_group": -1}), "controller.pod_security_context.run_as_group", "at least 0"),
		pt.Refused("negative container UID", ctl("container_security_context", map[string]any{"run_as_user": -1}), "controller.container_security_context.run_as_user", "at least 0"),
		pt.Refused("container seccomp Localhost", ctl("container_security_context", map[string]any{"seccomp_profile": "Localhost"}), "controller.container_security_context.seccomp_profile", "one of"),
		pt.Refused("negative fs group", ctl("pod_security_context", map[string]any{"fs_group": -1}), "controller.pod_security_context.fs_group", "at least 0"),
		pt.Refused("seccomp Localhost", ctl("pod_security_context", map[string]any{"seccomp_profile": "Localhost"}), "controller.pod_security_context.seccomp_profile", "one of"),
		pt.Refused("pod root with run_as_non_root", ctl("pod_security_context", map[string]any{"run_as_non_root": true, "run_as_user": 0}),
			"controller.pod_security_context.run_as_user", "never run"),
		pt.Refused("container root with run_as_non_root", ctl("container_security_context", map[string]any{"run_as_non_root": true, "run_as_user": 0}),
			"controller.container_security_context.run_as_user", "never run"),
		// The kubelet judges the effective settings: the container's where
		// set, else the pod's.
		pt.Refused("pod run_as_non_root, container root", c("controller", map[string]any{
			"pod_security_context":       map[string]any{"run_as_non_root": true},
			"container_security_context": map[string]any{"run_as_user": 0},
		}), "controller.container_security_context.run_as_user", "never run", "pod_security_context"),
		pt.Refused("container run_as_non_root, pod root", c("controller", map[string]any{
			"pod_security_context":       map[string]any{"run_as_user": 0},
			"container_security_context": map[string]any{"run_as_non_root": true},
		}), "controller.pod_security_context.run_as_user", "never run", "container_security_context"),
		pt.Refused("capability in lower case", ctl("container_security_context", map[string]any{"capabilities_drop": []any{"all"}}),
			"controller.container_security_context.capabilities_drop[0]", "capability name"),
		pt.Refused("capability to add in lower case", ctl("container_security_context", map[string]any{"capabilities_add": []any{"net_raw"}}),
			"controller.container_security_context.capabilities_add[0]", "capability name"),
		pt.Refused("negative container group", ctl("container_security_context", map[string]any{"run_as_group": -5}),
			"controller.container_security_context.run_as_group", "at least 0"),
		pt.Refused("affinity with a typo", ctl("affinity", `{"nodeAffinty":{}}`), "controller.affinity", `unknown field "nodeAffinty"`),
		pt.Refused("affinity as YAML", ctl("affinity", "nodeAffinity: {}"), "controller.affinity", "Kubernetes Affinity"),
		// The chart's typed controller values (flags.go).
		pt.Refused("kube API burst 0", ctl("kube_api_burst", 0), "controller.kube_api_burst", "at least 1"),
		pt.Refused("sandbox workers 0", ctl("sandbox_concurrent_workers", 0), "controller.sandbox_concurrent_workers", "at least 1"),
		pt.Refused("claim workers negative", ctl("sandbox_claim_concurrent_workers", -1), "controller.sandbox_claim_concurrent_workers", "at least 1"),
		pt.Refused("warm pool workers 0", ctl("sandbox_warm_pool_concurrent_workers", 0), "controller.sandbox_warm_pool_concurrent_workers", "at least 1"),
		pt.Refused("template workers 0", ctl("sandbox_template_concurrent_workers", 0), "controller.sandbox_template_concurrent_workers", "at least 1"),
		pt.Refused("warm pool batch 0", ctl("sandbox_warm_pool_max_batch_size", 0), "controller.sandbox_warm_pool_max_batch_size", "at least 1"),
		pt.Refused("fractional burst", ctl("kube_api_burst", 2.5), "controller.kube_api_burst", "Not a whole number"),
		pt.Refused("grace period without a unit", ctl("sandbox_warm_pool_readiness_grace_period", "300"), "controller.sandbox_warm_pool_readiness_grace_period", "Go duration"),
		pt.Refused("grace period zero", ctl("sandbox_warm_pool_readiness_grace_period", "0s"), "controller.sandbox_warm_pool_readiness_grace_period", "greater than zero"),
		pt.Refused("recheck interval negative", ctl("sandbox_warm_pool_unschedulable_recheck_interval", "-1m"), "controller.sandbox_warm_pool_unschedulable_recheck_interval", "greater than zero"),
		pt.Refused("cluster domain in upper case", ctl("cluster_domain", "Cluster.Local"), "controller.cluster_domain", "RFC 1123 subdomain"),
		pt.Refused("lease namespace with an underscore", ctl("leader_election_namespace", "kube_system"), "controller.leader_election_namespace", "RFC 1123 label"),
		pt.Refused("typed value also in args", c("controller", map[string]any{"leader_elect": false, "args": []any{"--extensions", "--leader-elect=true"}}),
			"controller.args[1]", "controller.leader_elect", "one place"),
		pt.Refused("grace period before v0.5.6", c("version", "v0.5.5", "controller", map[string]any{"sandbox_warm_pool_readiness_grace_period": "10m"}),
			"controller.sandbox_warm_pool_readiness_grace_period", "v0.5.6, v1.0.1, v1.0.3", "flag provided but not defined"),
		pt.Refused("recheck interval before v0.5.6", c("version", "v0.5.0", "controller", map[string]any{"sandbox_warm_pool_unschedulable_recheck_interval": "2m"}),
			"controller.sandbox_warm_pool_unschedulable_recheck_interval", "from v0.5.6 on"),
		pt.Refused("claim workers without the extensions", c("extensions", false, "controller", map[string]any{"sandbox_claim_concurrent_workers": 10}),
			"controller.sandbox_claim_concurrent_workers", "extensions = false"),
		// v1.0.3's metrics TLS (flags.go).
		pt.Refused("metrics cert secret with a capital", c("version", "v1.0.3", "controller", map[string]any{"metrics_secure_serving": true, "metrics_cert_secret": "Metrics-TLS"}),
			"controller.metrics_cert_secret", "RFC 1123 subdomain"),
		pt.Refused("metrics cert without secure serving", c("version", "v1.0.3", "controller", map[string]any{"metrics_cert_secret": "metrics-tls"}),
			"controller.metrics_cert_secret", "metrics_secure_serving = true"),
		pt.Refused("secure serving before v1.0.3", c("version", "v1.0.1", "controller", map[string]any{"metrics_secure_serving": true}),
			"controller.metrics_secure_serving", "from v1.0.3 on", "flag provided but not defined"),
		pt.Refused("secure serving with the HTTP service monitor", c("version", "v1.0.3", "controller", map[string]any{"metrics_secure_serving": true},
			"metrics", map[string]any{"service_monitor": map[string]any{}}), "controller.metrics_secure_serving", "over HTTP"),
		pt.Refused("metrics cert dir also in args", c("version", "v1.0.3", "controller", map[string]any{"metrics_secure_serving": true, "metrics_cert_secret": "metrics-tls",
			"args": []any{"--metrics-cert-dir=/certs"}}), "controller.args[0]", "controller.metrics_cert_secret"),
		// The chart's metrics objects (metrics.go).
		pt.Refused("scrape interval in words", c("metrics", map[string]any{"service_monitor": map[string]any{"interval": "30 seconds"}}), "metrics.service_monitor.interval", "Prometheus duration"),
		pt.Refused("fractional scrape timeout", c("metrics", map[string]any{"service_monitor": map[string]any{"scrape_timeout": "1.5s"}}), "metrics.service_monitor.scrape_timeout", "Prometheus duration"),
		pt.Refused("service monitor label key with a space", c("metrics", map[string]any{"service_monitor": map[string]any{"labels": map[string]any{"my release": "x"}}}), `metrics.service_monitor.labels["my release"]`),
		pt.Refused("rule label key with a space", c("metrics", map[string]any{"prometheus_rule": map[string]any{"labels": map[string]any{"a b": "x"}}}), `metrics.prometheus_rule.labels["a b"]`),
		pt.Refused("rule groups as YAML", c("metrics", map[string]any{"prometheus_rule": map[string]any{"additional_groups": "- name: x"}}), "metrics.prometheus_rule.additional_groups", "JSON list"),
		pt.Refused("rule group without a name", c("metrics", map[string]any{"prometheus_rule": map[string]any{"additional_groups": `[{"rules":[{"alert":"A","expr":"up"}]}]`}}), "metrics.prometheus_rule.additional_groups", "no name"),
		pt.Refused("rule group named as the chart's", c("metrics", map[string]any{"prometheus_rule": map[string]any{"additional_groups": `[{"name":"agent-sandbox-controller.rules","rules":[{"alert":"A","expr":"up"}]}]`}}), "metrics.prometheus_rule.additional_groups", "taken"),
		pt.Refused("rule group without rules", c("metrics", map[string]any{"prometheus_rule": map[string]any{"additional_groups": `[{"name":"x","rules":[]}]`}}), "metrics.prometheus_rule.additional_groups", "no rules"),
		pt.Refused("setting the computed namespace", c("namespace", "agent-sandbox-system"), "namespace", "read-only"),
		pt.Refused("label domain in upper case", c("allowed_label_domains", []any{"Example.com"}), `allowed_label_domains["Example.com"]`, "lower-case DNS subdomain"),
		pt.Refused("label domain with a slash", c("allowed_label_domains", []any{"example.com/team"}), `allowed_label_domains["example.com/team"]`, "label domain"),
		pt.Refused("label domain with a wildcard", c("allowed_label_domains", []any{"*.example.com"}), `allowed_label_domains["*.example.com"]`, "label domain"),
		pt.Refused("empty label domain", c("allowed_label_domains", []any{""}), `allowed_label_domains[""]`, "label domain"),
		pt.Refused("no label domains", c("allowed_label_domains", []any{}), "allowed_label_domains", "at least 1"),
		pt.Refused("label domains without the extensions", c("allowed_label_domains", []any{"example.com"}, "extensions", false),
			"allowed_label_domains", "extensions = false", "agent-sandbox-config"),
		pt.Refused("extensions = false with an own manifest", c("manifest", "kind: x", "extensions", false), "extensions", "release assets"),
		pt.Refused("manifest and manifest_url", c("manifest", "kind: x", "manifest_url", "https://example.com/x.yaml"), "manifest", "manifest_url"),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, typ, cases)
	t.Logf("agentsandbox_controller: %d refused at validate", len(cases))
}
