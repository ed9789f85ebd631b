package sandbox_test

import (
	"maps"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// These tests drive the provider through the plugin protocol, as Terraform
// does, without a cluster: validation and planning must not need one.

// base is a valid sandbox that each bad-input case breaks in one place.
func base(extra map[string]any) map[string]any {
	cfg := map[string]any{
		"name": "agent", "namespace": "agents",
		"pod_template": map[string]any{"containers": []any{protocoltest.Container(nil)}},
	}
	maps.Copy(cfg, extra)
	return cfg
}

func claim(extra map[string]any) map[string]any {
	c := map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}
	maps.Copy(c, extra)
	return c
}

func TestBadInputFailsAtPlanWithItsPath(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	s.ExpectRefused(t, sandbox.ResourceType, []protocoltest.BadInput{
		protocoltest.Refused("bad name", base(map[string]any{"name": "Agent_1"}), "name", `"Agent_1"`),
		protocoltest.Refused("bad namespace", base(map[string]any{"namespace": "team a"}), "namespace", `"team a"`),
		protocoltest.Refused("reserved sandbox label", base(map[string]any{"labels": map[string]any{"agents.x-k8s.io/owner": "me"}}), `labels["agents.x-k8s.io/owner"]`, "agents.x-k8s.io/"),
		protocoltest.Refused("reserved pod annotation", base(map[string]any{"pod_template": map[string]any{
			"annotations": map[string]any{"extensions.agents.x-k8s.io/x": "y"}, "containers": []any{protocoltest.Container(nil)},
		}}), `pod_template.annotations["extensions.agents.x-k8s.io/x"]`, "extensions.agents.x-k8s.io/"),
		protocoltest.Refused("unknown operating mode", base(map[string]any{"operating_mode": "Paused"}), "operating_mode", `"Paused"`, "Running"),
		protocoltest.Refused("shutdown_time not a time", base(map[string]any{"shutdown_time": "tomorrow"}), "shutdown_time", `"tomorrow"`, "RFC 3339"),
		protocoltest.Refused("shutdown_time without T", base(map[string]any{"shutdown_time": "2030-01-02 15:04:05Z"}), "shutdown_time", `"2030-01-02 15:04:05Z"`),
		protocoltest.Refused("shutdown_time without zone", base(map[string]any{"shutdown_time": "2030-01-02T15:04:05"}), "shutdown_time", `"2030-01-02T15:04:05"`),
		protocoltest.Refused("unknown shutdown policy", base(map[string]any{"shutdown_policy": "Keep"}), "shutdown_policy", `"Keep"`),
		protocoltest.Refused("storage 1Gx", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gx"}}})}}),
			"volume_claim_templates[0].resources.requests.storage", `"1Gx"`),
		protocoltest.Refused("negative storage", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{
			"resources": map[string]any{"requests": map[string]any{"storage": "-1Gi"}}})}}),
			"volume_claim_templates[0].resources.requests.storage", `"-1Gi"`, "negative"),
		protocoltest.Refused("unknown access mode", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{"access_modes": []any{"ReadWrite"}})}}),
			"volume_claim_templates[0].access_modes[0]", `"ReadWrite"`),
		protocoltest.Refused("bad claim name", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{"name": "Data_1"})}}),
			"volume_claim_templates[0].name", `"Data_1"`),
		protocoltest.Refused("duplicate claim names", base(map[string]any{"volume_claim_templates": []any{claim(nil), claim(nil)}}),
			"volume_claim_templates[1].name", `"data"`, "volume_claim_templates[0]"),
		protocoltest.Refused("bad storage class", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{"storage_class_name": "Fast_SSD"})}}),
			"volume_claim_templates[0].storage_class_name", `"Fast_SSD"`),
		protocoltest.Refused("unknown volume mode", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{"volume_mode": "Raw"})}}),
			"volume_claim_templates[0].volume_mode", `"Raw"`),
		protocoltest.Refused("claim label value with a space", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{"labels": map[string]any{"tier": "fast disk"}})}}),
			`volume_claim_templates[0].labels["tier"]`, `"fast disk"`),
		protocoltest.Refused("claim annotation key with two slashes", base(map[string]any{"volume_claim_templates": []any{claim(map[string]any{"annotations": map[string]any{"a/b/c": "x"}})}}),
			`volume_claim_templates[0].annotations["a/b/c"]`, `"a/b/c"`),
		protocoltest.Refused("empty claim list", base(map[string]any{"volume_claim_templates": []any{}}), "volume_claim_templates", "at least 1"),
		protocoltest.Refused("bad cpu limit", base(map[string]any{"pod_template": map[string]any{"containers": []any{protocoltest.Container(map[string]any{
			"resources": map[string]any{"limits": map[string]any{"cpu": "1Gx", "memory": "1Gi"}}})}}}),
			`pod_template.containers[0].resources.limits["cpu"]`, `"1Gx"`),
		protocoltest.Refused("mount of no volume or claim", base(map[string]any{"pod_template": map[string]any{"containers": []any{protocoltest.Container(map[string]any{
			"volume_mounts": []any{map[string]any{"name": "scratch", "mount_path": "/scratch"}}})}}}),
			"pod_template.containers[0].volume_mounts[0].name", `"scratch"`),
	})

	t.Run("shutdown time in the past (plan)", func(t *testing.T) {
		before := kube.RequestCount()
		_, diags := s.PlanCreate(t, sandbox.ResourceType, base(map[string]any{"shutdown_time": past}))
		protocoltest.ExpectErrorAt(t, diags, "shutdown_time", `"`+past+`"`, "already passed")
		if n := kube.RequestCount() - before; n != 0 {
			t.Errorf("planning sent %d requests", n)
		}
	})
}

// A running sandbox whose image changes is updated in place, but its pod
// keeps the old image until it is recreated: the plan says so at
// pod_template, and says nothing when only the pod's labels change.
func TestPlanWarnsThatARunningPodKeepsItsSpec(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	created, diags := s.Plan(t, sandbox.ResourceType, base(nil))
	if len(diags) > 0 {
		t.Fatalf("planning the base: %s", protocoltest.Describe(diags))
	}
	prior := protocoltest.Settled(t, created)
	_, diags = s.PlanUpdate(t, sandbox.ResourceType, prior, base(map[string]any{"pod_template": map[string]any{
		"containers": []any{protocoltest.Container(map[string]any{"image": "python:3.14"})}}}))
	protocoltest.ExpectWarningAt(t, diags, "pod_template", "Running pod keeps its current spec", `operating_mode = "Suspended"`)
	_, diags = s.PlanUpdate(t, sandbox.ResourceType, prior, base(map[string]any{"pod_template": map[string]any{
		"labels": map[string]any{"team": "b"}, "containers": []any{protocoltest.Container(nil)}}}))
	if len(diags) > 0 {
		t.Errorf("a label change reaches the running pod, yet the plan said: %s", protocoltest.Describe(diags))
	}
}

func TestGoodInputPasses(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	for name, cfg := range map[string]map[string]any{
		"minimal": base(nil),
		"a mount of a claim template": base(map[string]any{
			"volume_claim_templates": []any{claim(map[string]any{"access_modes": []any{"ReadWriteOncePod"}, "volume_mode": "Filesystem"})},
			"pod_template": map[string]any{"containers": []any{protocoltest.Container(map[string]any{
				"volume_mounts": []any{map[string]any{"name": "data", "mount_path": "/data"}}})}},
		}),
		"suspended with an expiry": base(map[string]any{
			"operating_mode": "Suspended", "shutdown_time": "2030-01-02T17:04:05+02:00", "shutdown_policy": "Delete",
		}),
		// Values not known yet are not judged.
		"unknown claim names": base(map[string]any{
			"volume_claim_templates": protocoltest.Unknown,
			"pod_template": map[string]any{"containers": []any{protocoltest.Container(map[string]any{
				"volume_mounts": []any{map[string]any{"name": "data", "mount_path": "/data"}}})}},
		}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := protocoltest.Errors(s.ValidateResource(t, sandbox.ResourceType, cfg)); len(errs) > 0 {
				t.Error(protocoltest.Describe(errs))
			}
		})
	}
}

// TestPlanShowsHardenedDefaults plans a new sandbox without a cluster: the
// defaults are in the plan, the status is left to the apply.
func TestPlanShowsHardenedDefaults(t *testing.T) {
	s := protocoltest.New(t, provider.New("test"))
	before := kube.RequestCount()
	planned, diags := s.PlanCreate(t, sandbox.ResourceType, base(nil))
	if errs := protocoltest.Errors(diags); len(errs) > 0 {
		t.Fatal(protocoltest.Describe(errs))
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("planning sent %d requests", n)
	}
	var pod map[string]tftypes.Value
	if err := planned["pod_template"].As(&pod); err != nil {
		t.Fatal(err)
	}
	var runtime string
	_ = pod["runtime_class_name"].As(&runtime)
	var mode, policy string
	var wait bool
	_ = planned["operating_mode"].As(&mode)
	_ = planned["shutdown_policy"].As(&policy)
	_ = planned["wait_for_ready"].As(&wait)
	if runtime != "gvisor" || mode != "Running" || policy != "Retain" || !wait {
		t.Errorf("planned runtime %q, mode %q, policy %q, wait %v", runtime, mode, policy, wait)
	}
	for _, computed := range []string{"ready", "service_fqdn", "pod_ips", "node_name"} {
		if planned[computed].IsKnown() {
			t.Errorf("%s is planned as %v; it is only known after apply", computed, planned[computed])
		}
	}
	// Unset service stays null: nothing is sent, and upstream's controller
	// creates no Service but keeps one that exists.
	if !planned["service"].IsNull() {
		t.Errorf("service = %v, want null (unset is not a default of false)", planned["service"])
	}
}
