package sandboxclaim_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxclaim"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// These tests drive the provider through the plugin protocol, as Terraform
// does, without a cluster: validation and planning must not need one.

// claim is a valid configuration that each bad-input case breaks in one place.
func claim(extra map[string]any) map[string]any {
	cfg := map[string]any{"name": "session", "namespace": "agents", "warm_pool": "python-pool"}
	maps.Copy(cfg, extra)
	return cfg
}

func env(entries ...map[string]any) map[string]any {
	list := make([]any, len(entries))
	for i := range entries {
		list[i] = entries[i]
	}
	return map[string]any{"env": list}
}

func podMetadata(labels, annotations map[string]string) map[string]any {
	pm := map[string]any{}
	if labels != nil {
		pm["labels"] = labels
	}
	if annotations != nil {
		pm["annotations"] = annotations
	}
	return map[string]any{"additional_pod_metadata": pm}
}

func TestBadInputFailsAtPlanWithItsPath(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	s.ExpectRefused(t, sandboxclaim.ResourceType, []pt.BadInput{
		pt.Refused("upper-case name", claim(map[string]any{"name": "Session"}), "name", `"Session"`),
		pt.Refused("name too long", claim(map[string]any{"name": strings.Repeat("s", 254)}), "name", "253"),
		pt.Refused("bad namespace", claim(map[string]any{"namespace": "Agents"}), "namespace", `"Agents"`),
		pt.Refused("bad warm pool name", claim(map[string]any{"warm_pool": "pool_a"}), "warm_pool", `"pool_a"`),
		pt.Refused("shutdown time not a time", claim(map[string]any{"shutdown_time": "tomorrow"}), "shutdown_time", `"tomorrow"`, "RFC 3339"),
		pt.Refused("shutdown time without T", claim(map[string]any{"shutdown_time": "2030-01-02 15:04:05Z"}), "shutdown_time", `"2030-01-02 15:04:05Z"`),
		pt.Refused("shutdown time without zone", claim(map[string]any{"shutdown_time": "2030-01-02T15:04:05"}), "shutdown_time", `"2030-01-02T15:04:05"`),
		pt.Refused("negative ttl", claim(map[string]any{"ttl_seconds_after_finished": -5}), "ttl_seconds_after_finished", "-5"),
		pt.Refused("ttl beyond int32", claim(map[string]any{"ttl_seconds_after_finished": int64(1) << 31}), "ttl_seconds_after_finished", "2147483648"),
		pt.Refused("unknown shutdown policy", claim(map[string]any{"shutdown_policy": "Orphan"}), "shutdown_policy", `"Orphan"`, "DeleteForeground"),
		pt.Refused("shutdown policy in lower case", claim(map[string]any{"shutdown_policy": "delete"}), "shutdown_policy", `"delete"`),
		pt.Refused("env name with =", claim(env(map[string]any{"name": "A=B", "value": "x"})), "env[0].name", `"A=B"`),
		pt.Refused("empty env name", claim(env(map[string]any{"name": "", "value": "x"})), "env[0].name", `""`),
		pt.Refused("duplicate env", claim(env(map[string]any{"name": "A", "value": "x"}, map[string]any{"name": "B", "value": "y"}, map[string]any{"name": "A", "value": "z"})), "env[2].name", "env[0] and env[2]", `"A"`),
		pt.Refused("duplicate env in a named container", claim(env(map[string]any{"name": "A", "value": "x", "container_name": "py"}, map[string]any{"name": "A", "value": "y", "container_name": "py"})), "env[1].name", `container "py"`),
		pt.Refused("bad container name", claim(env(map[string]any{"name": "A", "value": "x", "container_name": "Main_C"})), "env[0].container_name", `"Main_C"`),
		pt.Refused("reserved pod label", claim(podMetadata(map[string]string{"agents.x-k8s.io/claim-uid": "x"}, nil)), `additional_pod_metadata.labels["agents.x-k8s.io/claim-uid"]`, "Reserved"),
		pt.Refused("reserved extensions pod label", claim(podMetadata(map[string]string{"extensions.agents.x-k8s.io/x": "y"}, nil)), `additional_pod_metadata.labels["extensions.agents.x-k8s.io/x"]`, "Reserved"),
		pt.Refused("pod label without a domain", claim(podMetadata(map[string]string{"team": "a"}, nil)), `additional_pod_metadata.labels["team"]`, `"team"`, "sandbox.users.io/team"),
		pt.Refused("router identity", claim(podMetadata(map[string]string{"app": "sandbox-router"}, nil)), `additional_pod_metadata.labels["app"]`, "sandbox-router"),
		pt.Refused("bad pod label value", claim(podMetadata(map[string]string{"sandbox.users.io/team": "a b"}, nil)), `additional_pod_metadata.labels["sandbox.users.io/team"]`, `"a b"`),
		pt.Refused("reserved pod annotation", claim(podMetadata(nil, map[string]string{"agents.x-k8s.io/pod-name": "x"})), `additional_pod_metadata.annotations["agents.x-k8s.io/pod-name"]`, "Reserved"),
		pt.Refused("kubernetes.io pod annotation", claim(podMetadata(nil, map[string]string{"kubernetes.io/psp": "x"})), `additional_pod_metadata.annotations["kubernetes.io/psp"]`, "Restricted", `"kubernetes.io/psp"`),
		pt.Refused("k8s.io subdomain pod annotation", claim(podMetadata(nil, map[string]string{"node.k8s.io/x": "y"})), `additional_pod_metadata.annotations["node.k8s.io/x"]`, "Restricted"),
		pt.Refused("bad pod annotation key", claim(podMetadata(nil, map[string]string{"bad key": "x"})), `additional_pod_metadata.annotations["bad key"]`, `"bad key"`),
		pt.Refused("reserved claim label", claim(map[string]any{"labels": map[string]string{"agents.x-k8s.io/sandbox-name": "x"}}), `labels["agents.x-k8s.io/sandbox-name"]`, "Reserved"),
	})
}

func TestGoodInputPasses(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	for name, cfg := range map[string]map[string]any{
		"minimal": claim(nil),
		"everything": claim(map[string]any{
			"shutdown_time": "2030-01-02T17:04:05+02:00", "ttl_seconds_after_finished": 0, "shutdown_policy": "DeleteForeground",
			"env":                     []any{map[string]any{"name": "A", "value": "x"}, map[string]any{"name": "A", "value": "y", "container_name": "sidecar"}},
			"additional_pod_metadata": map[string]any{"labels": map[string]string{"sandbox.users.io/team": "a", "team.sandbox.users.io/x": "y"}, "annotations": map[string]string{"example.com/x": "y", "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}},
			"labels":                  map[string]string{"team": "a"},
		}),
		"fractional seconds":         claim(map[string]any{"shutdown_time": "2030-01-02T15:04:05.5Z"}),
		"app label of another value": claim(podMetadata(map[string]string{"sandbox.users.io/app": "sandbox-router"}, nil)),
		// Values not known yet are not judged.
		"unknowns": claim(map[string]any{"warm_pool": pt.Unknown, "shutdown_time": pt.Unknown, "env": []any{
			map[string]any{"name": pt.Unknown, "value": "x"}, map[string]any{"name": "A", "value": pt.Unknown},
		}, "additional_pod_metadata": map[string]any{"labels": pt.Unknown}}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := pt.Errors(s.ValidateResource(t, sandboxclaim.ResourceType, cfg)); len(errs) > 0 {
				t.Error(pt.Describe(errs))
			}
		})
	}
}

// TestPlanWithoutACluster plans a new claim through the protocol: the
// default shutdown policy is known, status is not, nothing is sent.
func TestPlanWithoutACluster(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	before := kube.RequestCount()
	planned, diags := s.PlanCreate(t, sandboxclaim.ResourceType, claim(nil))
	if errs := pt.Errors(diags); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}
	var policy string
	if err := planned["shutdown_policy"].As(&policy); err != nil || policy != "Retain" {
		t.Errorf("shutdown_policy = %v", planned["shutdown_policy"])
	}
	var wait bool
	if err := planned["wait_for_ready"].As(&wait); err != nil || !wait {
		t.Errorf("wait_for_ready = %v", planned["wait_for_ready"])
	}
	for _, a := range []string{"sandbox_name", "pod_ips", "service_fqdn", "ready", "id"} {
		if planned[a].IsKnown() {
			t.Errorf("%s = %v, want unknown until applied", a, planned[a])
		}
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("planning sent %d requests", n)
	}
}
