package isolationreport_test

import (
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

const typeName = "agentsandbox_isolation_report"

func cfg(extra map[string]any) map[string]any {
	c := map[string]any{"namespace": "agents"}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func dest(e map[string]any) map[string]any {
	d := map[string]any{"name": "proxy", "address": "10.0.0.10", "port": 443}
	for k, v := range e {
		d[k] = v
	}
	return d
}

// TestBadInput: what a user may get wrong is refused at validation, on the
// attribute, before a request is sent.
func TestBadInput(t *testing.T) {
	dests := func(ds ...map[string]any) map[string]any {
		l := []any{}
		for _, d := range ds {
			l = append(l, d)
		}
		return cfg(map[string]any{"destinations": l})
	}
	srcs := func(ds ...map[string]any) map[string]any {
		return cfg(map[string]any{"sources": dests(ds...)["destinations"]})
	}
	cases := []pt.BadInput{
		pt.Refused("no namespace", map[string]any{}, "namespace"),
		pt.Refused("namespace with a slash", cfg(map[string]any{"namespace": "a/b"}), "namespace"),
		pt.Refused("selector that does not parse", cfg(map[string]any{"selector": "app in (a"}), "selector", "label selector"),
		pt.Refused("router namespace with a capital", cfg(map[string]any{"router_namespace": "Agent-Sandbox"}), "router_namespace"),
		pt.Refused("not an address", dests(dest(map[string]any{"address": "metadata"})), "destinations[0].address", "IP address"),
		pt.Refused("a CIDR, not an address", dests(dest(map[string]any{"address": "10.0.0.0/8"})), "destinations[0].address"),
		pt.Refused("port 0", dests(dest(map[string]any{"port": 0})), "destinations[0].port"),
		pt.Refused("port too high", dests(dest(map[string]any{"port": 70000})), "destinations[0].port"),
		pt.Refused("protocol in lower case", dests(dest(map[string]any{"protocol": "tcp"})), "destinations[0].protocol"),
		pt.Refused("name with a dash", dests(dest(map[string]any{"name": "my-proxy"})), "destinations[0].name"),
		pt.Refused("name of a built-in verdict", dests(dest(map[string]any{"name": "metadata_server_ipv4"})), "destinations[0].name", "built-in"),
		pt.Refused("built-in ingress name", cfg(map[string]any{"sources": []any{dest(map[string]any{"name": "from_internet"})}}), "sources[0].name", "built-in"),
		pt.Refused("duplicate name", dests(dest(nil), dest(nil)), "destinations[1].name", "Duplicate"),
		pt.Refused("neither address nor namespace", dests(dest(map[string]any{"address": nil})), "destinations[0]", "address", "namespace"),
		pt.Refused("address and namespace", dests(dest(map[string]any{"namespace": "kube-system"})), "destinations[0].namespace", "not both"),
		pt.Refused("labels on an address", dests(dest(map[string]any{"labels": map[string]any{"app": "x"}})), "destinations[0].labels"),
		pt.Refused("bad label key", dests(dest(map[string]any{"address": nil, "namespace": "kube-system", "labels": map[string]any{"a b": "x"}})), `destinations[0].labels["a b"]`, "label key"),
		// sources are written like destinations and refused the same way.
		pt.Refused("source address a host name", srcs(dest(map[string]any{"name": "router", "address": "router.local"})), "sources[0].address", "IP address"),
		pt.Refused("source namespace in capitals", srcs(dest(map[string]any{"name": "router", "address": nil, "namespace": "Agent-Sandbox-System"})), "sources[0].namespace"),
		pt.Refused("source labels on an address", srcs(dest(map[string]any{"name": "router", "labels": map[string]any{"app": "sandbox-router"}})), "sources[0].labels"),
		pt.Refused("source name in capitals", srcs(dest(map[string]any{"name": "Router"})), "sources[0].name"),
		pt.Refused("source label value with a space", srcs(dest(map[string]any{"name": "router", "address": nil, "namespace": "agent-sandbox-system",
			"labels": map[string]any{"app": "sandbox router"}})), `sources[0].labels["app"]`, "label value"),
		pt.Refused("destination namespace with _", dests(dest(map[string]any{"address": nil, "namespace": "kube_system"})), "destinations[0].namespace"),
		pt.Refused("source port negative", srcs(dest(map[string]any{"name": "router", "port": -1})), "sources[0].port"),
		pt.Refused("isolating RuntimeClass in capitals", cfg(map[string]any{"isolating_runtime_classes": []any{"MicroVM"}}),
			`isolating_runtime_classes["MicroVM"]`, "RFC 1123 subdomain"),
		pt.Refused("empty isolating RuntimeClass", cfg(map[string]any{"isolating_runtime_classes": []any{""}}),
			`isolating_runtime_classes[""]`, "RFC 1123 subdomain"),
		pt.Refused("source protocol HTTP", srcs(dest(map[string]any{"name": "router", "protocol": "HTTP"})), "sources[0].protocol"),
	}
	s := pt.New(t, provider.New("test"))
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := kube.RequestCount()
			pt.ExpectErrorAt(t, s.ValidateDataSource(t, typeName, tc.Config), tc.Path, tc.Mentions...)
			if n := kube.RequestCount() - before; n != 0 {
				t.Errorf("validation sent %d requests", n)
			}
		})
	}
	// And what is right passes.
	ok := cfg(map[string]any{
		"selector":                  "app.kubernetes.io/component=execution-sandbox,!legacy",
		"destinations":              []any{dest(nil), dest(map[string]any{"name": "dns", "address": nil, "namespace": "kube-system", "labels": map[string]any{"k8s-app": "kube-dns"}, "port": 53, "protocol": "UDP"})},
		"sources":                   []any{dest(map[string]any{"name": "router", "address": nil, "namespace": "agent-sandbox-system", "port": 8888})},
		"isolating_runtime_classes": []any{"microvm", "kata.vm"},
	})
	if errs := pt.Errors(s.ValidateDataSource(t, typeName, ok)); len(errs) > 0 {
		t.Errorf("a valid configuration is refused: %s", pt.Describe(errs))
	}
}
