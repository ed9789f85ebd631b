package sandbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The wide bad-input table of agentsandbox_sandbox (issue 13): what a
// newcomer writes wrong, each refused at the stage named by the function
// that runs it (validate, or plan for what needs the current time), on the
// exact attribute, with nothing sent to a cluster. TestBadInputFailsAtPlanWithItsPath
// in plan_test.go holds the first cases.

// sbx is a valid sandbox; each case changes one thing through with.
func sbx(with func(cfg, c map[string]any)) map[string]any {
	c := map[string]any{
		"name": "python", "image": "python:3.13",
		"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
	}
	cfg := map[string]any{"name": "agent", "namespace": "agents", "pod_template": map[string]any{"containers": []any{c}}}
	if with != nil {
		with(cfg, c)
	}
	return cfg
}

func limits(cpu, memory string) map[string]any {
	return map[string]any{"limits": map[string]any{"cpu": cpu, "memory": memory}}
}

const c0 = "pod_template.containers[0]"

func TestBadInputWideTable(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	atValidate := []pt.BadInput{
		pt.Refused("empty name", sbx(func(cfg, _ map[string]any) { cfg["name"] = "" }), "name"),
		pt.Refused("name with capitals", sbx(func(cfg, _ map[string]any) { cfg["name"] = "MyAgent" }), "name", `"MyAgent"`),
		pt.Refused("name too long", sbx(func(cfg, _ map[string]any) { cfg["name"] = strings.Repeat("a", 254) }), "name"),
		pt.Refused("namespace with capitals", sbx(func(cfg, _ map[string]any) { cfg["namespace"] = "Agents" }), "namespace", `"Agents"`),
		pt.Refused("empty namespace", sbx(func(cfg, _ map[string]any) { cfg["namespace"] = "" }), "namespace"),
		pt.Refused("service name with a dot", sbx(func(cfg, _ map[string]any) { cfg["name"] = "agent.v2"; cfg["service"] = true }), "name", "Service", `"agent-v2"`),
		pt.Refused("service name starting with a digit", sbx(func(cfg, _ map[string]any) { cfg["name"] = "1agent"; cfg["service"] = true }), "name", "RFC 1035"),
		pt.Refused("image with capitals", sbx(func(_, c map[string]any) { c["image"] = "Python:3.13" }), c0+".image", "python:3.13"),
		pt.Refused("image with a short digest", sbx(func(_, c map[string]any) { c["image"] = "python@sha256:deadbeef" }), c0+".image", "digest"),
		pt.Refused("image with a space", sbx(func(_, c map[string]any) { c["image"] = "python 3.13" }), c0+".image", "whitespace"),
		pt.Refused("empty image", sbx(func(_, c map[string]any) { c["image"] = "" }), c0+".image"),
		pt.Refused("zero cpu limit", sbx(func(_, c map[string]any) { c["resources"] = limits("0", "1Gi") }), c0+`.resources.limits["cpu"]`, "zero", "no limit"),
		pt.Refused("zero memory limit", sbx(func(_, c map[string]any) { c["resources"] = limits("1", "0") }), c0+`.resources.limits["memory"]`, "zero"),
		pt.Refused("memory in Gb", sbx(func(_, c map[string]any) { c["resources"] = limits("1", "1Gb") }), c0+`.resources.limits["memory"]`, `did you mean "1Gi"`),
		pt.Refused("memory in MB", sbx(func(_, c map[string]any) { c["resources"] = limits("1", "512MB") }), c0+`.resources.limits["memory"]`, `"512Mi"`),
		pt.Refused("cpu as words", sbx(func(_, c map[string]any) { c["resources"] = limits("one", "1Gi") }), c0+`.resources.limits["cpu"]`, `"one"`),
		pt.Refused("missing memory limit", sbx(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1"}}
		}), c0+".resources.limits", "memory"),
		pt.Refused("request above limit", sbx(func(_, c map[string]any) {
			c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "requests": map[string]any{"memory": "2Gi"}}
		}), c0+`.resources.requests["memory"]`, "limit"),
		pt.Refused("container name with capitals", sbx(func(_, c map[string]any) { c["name"] = "Python" }), c0+".name", `"Python"`),
		pt.Refused("duplicate container names", sbx(func(cfg, c map[string]any) {
			cfg["pod_template"] = map[string]any{"containers": []any{c, c}}
		}), "pod_template.containers[1].name", `"python"`),
		pt.Refused("mount of an undeclared volume", sbx(func(_, c map[string]any) {
			c["volume_mounts"] = []any{map[string]any{"name": "cache", "mount_path": "/cache"}}
		}), c0+".volume_mounts[0].name", `"cache"`),
		pt.Refused("relative mount path", sbx(func(cfg, c map[string]any) {
			cfg["volume_claim_templates"] = []any{map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}
			c["volume_mounts"] = []any{map[string]any{"name": "data", "mount_path": "data"}}
		}), c0+".volume_mounts[0].mount_path"),
		pt.Refused("storage in GB", sbx(func(cfg, _ map[string]any) {
			cfg["volume_claim_templates"] = []any{map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "10GB"}}}}
		}), `volume_claim_templates[0].resources.requests.storage`, `"10Gi"`),
		pt.Refused("label value with a space", sbx(func(cfg, _ map[string]any) { cfg["labels"] = map[string]any{"team": "ml team"} }), `labels["team"]`, `"ml team"`),
		pt.Refused("label key with two slashes", sbx(func(cfg, _ map[string]any) { cfg["labels"] = map[string]any{"a/b/c": "x"} }), `labels["a/b/c"]`),
		pt.Refused("operating mode in lower case", sbx(func(cfg, _ map[string]any) { cfg["operating_mode"] = "running" }), "operating_mode", `"running"`),
		pt.Refused("shutdown time as a date", sbx(func(cfg, _ map[string]any) { cfg["shutdown_time"] = "2030-01-02" }), "shutdown_time", `"2030-01-02"`),
		pt.Refused("shutdown policy Delete in lower case", sbx(func(cfg, _ map[string]any) { cfg["shutdown_policy"] = "delete" }), "shutdown_policy", `"delete"`),
		pt.Refused("pod_spec_overrides not JSON", sbx(func(cfg, c map[string]any) {
			cfg["pod_template"] = map[string]any{"containers": []any{c}, "pod_spec_overrides": "{hostNetwork: }: true"}
		}), "pod_template.pod_spec_overrides"),
	}
	s.ExpectRefused(t, sandbox.ResourceType, atValidate)

	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	atPlan := []pt.BadInput{
		pt.Refused("shutdown time a minute ago", sbx(func(cfg, _ map[string]any) { cfg["shutdown_time"] = past }), "shutdown_time", "already passed"),
	}
	s.ExpectRefusedAtPlan(t, sandbox.ResourceType, atPlan)
	t.Logf("agentsandbox_sandbox: %d refused at validate, %d at plan (this table)", len(atValidate), len(atPlan))
}
