package controller_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

const routerType = "agentsandbox_sandbox_router"

func routerCfg(kv ...any) map[string]any {
	cfg := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		cfg[kv[i].(string)] = kv[i+1]
	}
	return cfg
}

// TestRouterBadInput: every bad input of agentsandbox_sandbox_router is
// refused at validate, at its attribute path, without a request.
func TestRouterBadInput(t *testing.T) {
	c := routerCfg
	secret := map[string]any{"name": "router-hmac", "key": "secret"}
	tol := func(tl map[string]any) map[string]any { return c("tolerations", []any{tl}) }
	cases := []pt.BadInput{
		pt.Refused("release without a router", c("version", "v0.5.5"), "version", "sandbox router", "v0.5.6, v1.0.1, v1.0.3"),
		pt.Refused("release the proxy does not serve", c("version", "v1.0.2"), "version", "v0.5.6, v1.0.1, v1.0.3"),
		pt.Refused("namespace with a capital", c("namespace", "Agents"), "namespace"),
		pt.Refused("negative replicas", c("replicas", -1), "replicas", "between 0 and 100"),
		pt.Refused("image with a capital", c("image", "Registry.example.com/Router:1"), "image", "image reference"),
		pt.Refused("image and image registry", c("image", "example.com/router:1", "image_registry", "mirror.example.com"), "image", "image_registry"),
		pt.Refused("image registry as URL", c("image_registry", "https://mirror.example.com"), "image_registry", "registry host"),
		pt.Refused("pull policy in lower case", c("image_pull_policy", "always"), "image_pull_policy", "one of"),
		pt.Refused("pull secret with a capital", c("image_pull_secrets", []any{"Mirror"}), "image_pull_secrets[0]"),
		pt.Refused("no pull secrets", c("image_pull_secrets", []any{}), "image_pull_secrets", "at least 1"),
		pt.Refused("cpu as words", c("resources", map[string]any{"limits": map[string]any{"cpu": "lots"}}), `resources.limits["cpu"]`, "Invalid quantity"),
		// The API server refuses a request above its limit
		// (ValidateResourceRequirements); the Deployment would fail at apply.
		pt.Refused("memory request above its limit", c("resources", map[string]any{"requests": map[string]any{"memory": "2Gi"}, "limits": map[string]any{"memory": "1Gi"}}),
			`resources.requests["memory"]`, "more than its limit", "1Gi"),
		pt.Refused("memory request in GB", c("resources", map[string]any{"requests": map[string]any{"memory": "1GB"}}), `resources.requests["memory"]`, `"1Gi"`),
		pt.Refused("cluster domain with a space", c("cluster_domain", "cluster local"), "cluster_domain"),
		pt.Refused("proxy timeout without unit", c("proxy_timeout", "180"), "proxy_timeout", "Go duration"),
		pt.Refused("zero proxy timeout", c("proxy_timeout", "0s"), "proxy_timeout", "greater than zero"),
		pt.Refused("retries 1000", c("upstream_max_retries", 1000), "upstream_max_retries", "between 0 and 100"),
		pt.Refused("cache namespace with a dot", c("cache_namespace", "team.a"), "cache_namespace"),
		pt.Refused("cache namespace without the cache", c("cache_namespace", "team-a", "cache_enabled", false), "cache_namespace", "cache_enabled = false"),
		pt.Refused("authz mode typo", c("authz_mode", "token-review"), "authz_mode", "one of"),
		pt.Refused("scoped tokens without a key", c("authz_mode", "scoped-token"), "authz_mode", "authz_scoped_token_secret"),
		pt.Refused("require token with allow-all", c("authz_mode", "allow-all", "authz_require_token", true), "authz_require_token", "tokenreview"),
		pt.Refused("audiences with scoped tokens", c("authz_mode", "scoped-token", "authz_scoped_token_secret", secret, "authz_audiences", []any{"x"}),
			"authz_audiences", "tokenreview"),
		pt.Refused("audience with a comma", c("authz_audiences", []any{"a,b"}), "authz_audiences[0]", "comma"),
		pt.Refused("no audiences", c("authz_audiences", []any{}), "authz_audiences", "at least 1"),
		pt.Refused("scoped token secret with tokenreview", c("authz_scoped_token_secret", secret), "authz_scoped_token_secret", "scoped-token"),
		pt.Refused("v2 keys with tokenreview", c("authz_scoped_token_verification_keys_secret", secret),
			"authz_scoped_token_verification_keys_secret", "scoped-token"),
		pt.Refused("v2 keys before v1.0.3", c("version", "v1.0.1", "authz_mode", "scoped-token", "authz_scoped_token_verification_keys_secret", secret),
			"authz_scoped_token_verification_keys_secret", "v1.0.3"),
		pt.Refused("v2 keys without the cache", c("authz_mode", "scoped-token", "authz_scoped_token_verification_keys_secret", secret, "cache_enabled", false),
			"cache_enabled", "v2 scoped tokens"),
		pt.Refused("secret name with a capital", c("authz_mode", "scoped-token", "authz_scoped_token_secret", map[string]any{"name": "HMAC", "key": "s"}),
			"authz_scoped_token_secret.name"),
		pt.Refused("secret key with a slash", c("authz_mode", "scoped-token", "authz_scoped_token_secret", map[string]any{"name": "hmac", "key": "a/b"}),
			"authz_scoped_token_secret.key"),
		pt.Refused("v2 keys secret name with a space", c("authz_mode", "scoped-token", "authz_scoped_token_verification_keys_secret", map[string]any{"name": "a b", "key": "k"}),
			"authz_scoped_token_verification_keys_secret.name"),
		pt.Refused("v2 keys secret key empty", c("authz_mode", "scoped-token", "authz_scoped_token_verification_keys_secret", map[string]any{"name": "keys", "key": ""}),
			"authz_scoped_token_verification_keys_secret.key"),
		pt.Refused("TLS secret with a capital", c("tls_secret_name", "Router-TLS"), "tls_secret_name"),
		pt.Refused("negative min available", c("pdb_min_available", -1), "pdb_min_available", "between 0 and 100"),
		pt.Refused("node selector key with !", c("node_selector", map[string]any{"bad key!": "x"}), `node_selector["bad key!"]`),
		pt.Refused("Exists with a value", tol(map[string]any{"key": "k", "operator": "Exists", "value": "v"}), "tolerations[0].value", "Exists"),
		pt.Refused("toleration seconds without NoExecute", tol(map[string]any{"key": "k", "value": "v", "effect": "NoSchedule", "toleration_seconds": 5}),
			"tolerations[0].toleration_seconds", "NoExecute"),
		pt.Refused("toleration without key but Equal", tol(map[string]any{"operator": "Equal", "value": "v"}), "tolerations[0].key", "Exists"),
		pt.Refused("toleration key with a space", tol(map[string]any{"key": "a b", "operator": "Exists"}), "tolerations[0].key"),
		pt.Refused("toleration value with a space", tol(map[string]any{"key": "k", "value": "a b"}), "tolerations[0].value"),
		pt.Refused("toleration operator typo", tol(map[string]any{"key": "k", "operator": "Sometimes"}), "tolerations[0].operator", "one of"),
		pt.Refused("toleration effect typo", tol(map[string]any{"key": "k", "operator": "Exists", "effect": "Never"}), "tolerations[0].effect", "one of"),
		pt.Refused("negative toleration seconds", tol(map[string]any{"key": "k", "operator": "Exists", "effect": "NoExecute", "toleration_seconds": -1}),
			"tolerations[0].toleration_seconds", "at least 0"),
		pt.Refused("affinity with a typo", c("affinity", `{"nodeAffinty":{}}`), "affinity", `unknown field "nodeAffinty"`),
		pt.Refused("no allowed clients", c("allowed_clients", []any{}), "allowed_clients", "at least 1"),
		pt.Refused("client namespace with a capital", c("allowed_clients", []any{map[string]any{"namespace": "Agents"}}), "allowed_clients[0].namespace"),
		pt.Refused("client label key with a space", c("allowed_clients", []any{map[string]any{"namespace": "agents", "pod_labels": map[string]any{"a b": "x"}}}),
			`allowed_clients[0].pod_labels["a b"]`),
		pt.Refused("clients and every namespace", c("allowed_clients", []any{map[string]any{"namespace": "agents"}}, "allow_clients_from_all_namespaces", true),
			"allowed_clients", "allow_clients_from_all_namespaces"),
		pt.Refused("metrics namespace with a dot", c("metrics_namespace", "mon.itoring"), "metrics_namespace"),
		pt.Refused("no sandbox namespaces", c("sandbox_namespaces", []any{}), "sandbox_namespaces", "at least 1"),
		pt.Refused("sandbox namespace with a capital", c("sandbox_namespaces", []any{"Team"}), `sandbox_namespaces["Team"]`),
		pt.Refused("sandbox port 0", c("sandbox_ports", []any{0}), "sandbox_ports[0]", "between 1 and 65535"),
		pt.Refused("no sandbox ports", c("sandbox_ports", []any{}), "sandbox_ports", "at least 1"),
		pt.Refused("API server address without prefix length", c("api_server_cidrs", []any{"10.0.0.1"}), "api_server_cidrs[0]", "CIDR"),
		pt.Refused("no API server addresses", c("api_server_cidrs", []any{}), "api_server_cidrs", "at least 1"),
		pt.Refused("DNS address without prefix length", c("dns_cidrs", []any{"169.254.20.10"}), "dns_cidrs[0]", "CIDR"),
		pt.Refused("no DNS addresses", c("dns_cidrs", []any{}), "dns_cidrs", "at least 1"),
		pt.Refused("clients without the policy", c("network_policy", false, "allowed_clients", []any{map[string]any{"namespace": "agents"}}),
			"allowed_clients", "network_policy = false"),
		pt.Refused("every namespace without the policy", c("network_policy", false, "allow_clients_from_all_namespaces", true),
			"allow_clients_from_all_namespaces", "network_policy = false"),
		pt.Refused("metrics without the policy", c("network_policy", false, "metrics_namespace", "monitoring"), "metrics_namespace", "network_policy = false"),
		pt.Refused("sandbox namespaces without the policy", c("network_policy", false, "sandbox_namespaces", []any{"a"}), "sandbox_namespaces", "network_policy = false"),
		pt.Refused("sandbox ports without the policy", c("network_policy", false, "sandbox_ports", []any{8888}), "sandbox_ports", "network_policy = false"),
		pt.Refused("API server without the policy", c("network_policy", false, "api_server_cidrs", []any{"10.0.0.1/32"}), "api_server_cidrs", "network_policy = false"),
		pt.Refused("DNS without the policy", c("network_policy", false, "dns_cidrs", []any{"169.254.20.10/32"}), "dns_cidrs", "network_policy = false"),
		pt.Refused("setting the computed URL", c("url", "http://x"), "url", "read-only"),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, routerType, cases)
}

// TestRouterLooseningsWarnAtPlan: every loosening of the router's defaults
// is accepted with a warning at its attribute when the configuration is
// validated (which terraform plan and apply do first), without a request;
// the defaults warn about nothing and plan hardened.
func TestRouterLooseningsWarnAtPlan(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	for _, tc := range []struct {
		name     string
		cfg      map[string]any
		path     string
		mentions []string
	}{
		{"authz off", routerCfg("authz_mode", "allow-all"), "authz_mode", []string{"without authorization", "every sandbox"}},
		{"tokenless requests", routerCfg("authz_require_token", false), "authz_require_token", []string{"tokenless"}},
		{"every namespace", routerCfg("allow_clients_from_all_namespaces", true), "allow_clients_from_all_namespaces", []string{"every namespace"}},
		{"no policy", routerCfg("network_policy", false), "network_policy", []string{"without a NetworkPolicy", "metadata server"}},
		{"no limits", routerCfg("resources", map[string]any{"requests": map[string]any{"cpu": "100m"}}), "resources.limits", []string{"limits"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := kube.RequestCount()
			diags := s.ValidateResource(t, routerType, tc.cfg)
			if errs := pt.Errors(diags); len(errs) > 0 {
				t.Fatalf("refused: %s", pt.Describe(errs))
			}
			pt.ExpectWarningAt(t, diags, tc.path, tc.mentions...)
			// terraform plan validates first, so the warning is in every
			// plan; planning itself must then go through without a
			// second copy of it.
			_, diags = s.Plan(t, routerType, tc.cfg)
			if len(diags) > 0 {
				t.Errorf("planning added diagnostics: %s", pt.Describe(diags))
			}
			if n := kube.RequestCount() - before; n != 0 {
				t.Errorf("validate and plan sent %d requests", n)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		planned, diags := s.Plan(t, routerType, routerCfg())
		for _, d := range diags {
			if d.Severity == tfprotov6.DiagnosticSeverityWarning || d.Severity == tfprotov6.DiagnosticSeverityError {
				t.Errorf("the defaults produce %s", pt.Describe(diags))
			}
		}
		var attrs map[string]tftypes.Value
		if err := planned.As(&attrs); err != nil {
			t.Fatal(err)
		}
		for attr, want := range map[string]string{
			"authz_mode": "tokenreview", "namespace": "agent-sandbox-system", "version": "v1.0.3",
			"url": "http://sandbox-router-svc.agent-sandbox-system.svc.cluster.local:8080",
		} {
			var got string
			if err := attrs[attr].As(&got); err != nil || got != want {
				t.Errorf("planned %s = %q (%v), want %q", attr, got, err, want)
			}
		}
		var requireToken, policy bool
		if err := attrs["authz_require_token"].As(&requireToken); err != nil || !requireToken {
			t.Errorf("planned authz_require_token = %v (%v)", requireToken, err)
		}
		if err := attrs["network_policy"].As(&policy); err != nil || !policy {
			t.Errorf("planned network_policy = %v (%v)", policy, err)
		}
	})
}
