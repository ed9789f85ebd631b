package warmpool_test

import (
	"maps"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// These tests drive the provider through the plugin protocol, as Terraform
// does, without a cluster: validation and planning must not need one.

// pool is a valid configuration that each bad-input case breaks in one place.
func pool(extra map[string]any) map[string]any {
	cfg := map[string]any{"name": "python-pool", "namespace": "agents", "template": "python"}
	maps.Copy(cfg, extra)
	return cfg
}

// badPoolInputs each break pool() in one place.
var badPoolInputs = []pt.BadInput{
	pt.Refused("upper-case name", pool(map[string]any{"name": "Python-Pool"}), "name", "Invalid name", `"Python-Pool"`),
	pt.Refused("underscore in name", pool(map[string]any{"name": "python_pool"}), "name", `"python_pool"`, "RFC 1123"),
	pt.Refused("name too long", pool(map[string]any{"name": strings.Repeat("a", 254)}), "name", "253"),
	pt.Refused("namespace with a dot", pool(map[string]any{"namespace": "team.a"}), "namespace", `"team.a"`),
	pt.Refused("bad template name", pool(map[string]any{"template": "My Template"}), "template", `"My Template"`),
	pt.Refused("negative replicas", pool(map[string]any{"replicas": -1}), "replicas", "-1"),
	pt.Refused("replicas beyond int32", pool(map[string]any{"replicas": int64(1) << 31}), "replicas", "2147483648"),
	pt.Refused("replicas with an external owner", pool(map[string]any{"replicas": 3, "replicas_managed_externally": true}), "replicas", "replicas = 3", "replicas_managed_externally"),
	pt.Refused("unknown update strategy", pool(map[string]any{"update_strategy": "RollingUpdate"}), "update_strategy", `"RollingUpdate"`, "Recreate", "OnReplenish"),
	pt.Refused("update strategy in lower case", pool(map[string]any{"update_strategy": "recreate"}), "update_strategy", `"recreate"`, "Recreate"),
	pt.Refused("reserved label", pool(map[string]any{"labels": map[string]string{agentsv1beta1.SandboxWarmPoolLabel: "x"}}), `labels["agents.x-k8s.io/warm-pool-sandbox"]`, "Reserved", "agents.x-k8s.io/"),
	pt.Refused("bad label value", pool(map[string]any{"labels": map[string]string{"team": "a b"}}), `labels["team"]`, `"a b"`),
	pt.Refused("bad annotation key", pool(map[string]any{"annotations": map[string]string{"bad key": "x"}}), `annotations["bad key"]`, `"bad key"`),
	pt.Refused("reserved annotation", pool(map[string]any{"annotations": map[string]string{"extensions.agents.x-k8s.io/x": "y"}}), `annotations["extensions.agents.x-k8s.io/x"]`, "Reserved"),
}

func TestBadInputFailsAtPlanWithItsPath(t *testing.T) {
	pt.New(t, provider.New("test")).ExpectRefused(t, warmpool.ResourceType, badPoolInputs)
}

func TestGoodInputPasses(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	for name, cfg := range map[string]map[string]any{
		"minimal":          pool(nil),
		"scaled to zero":   pool(map[string]any{"replicas": 0}),
		"external":         pool(map[string]any{"replicas_managed_externally": true}),
		"explicit managed": pool(map[string]any{"replicas": 4, "replicas_managed_externally": false}),
		"everything": pool(map[string]any{"replicas": 8, "update_strategy": "Recreate", "wait_for_ready": false,
			"labels": map[string]string{"team": "ml"}, "annotations": map[string]string{"example.com/owner": "platform"}}),
		// Values not known yet are not judged.
		"unknowns":                             pool(map[string]any{"name": pt.Unknown, "template": pt.Unknown, "replicas": pt.Unknown, "replicas_managed_externally": pt.Unknown}),
		"unknown external owner with replicas": pool(map[string]any{"replicas": 3, "replicas_managed_externally": pt.Unknown}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := pt.Errors(s.ValidateResource(t, warmpool.ResourceType, cfg)); len(errs) > 0 {
				t.Error(pt.Describe(errs))
			}
		})
	}
}

// TestPlanWithoutACluster plans new pools through the protocol: defaults
// and the selector are known at plan time, and nothing is sent anywhere.
func TestPlanWithoutACluster(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	before := kube.RequestCount()
	for _, tc := range []struct {
		name         string
		cfg          map[string]any
		replicas     any // int64, or nil for unknown
		selectorKnow bool
	}{
		{"defaults", pool(nil), int64(1), true},
		{"explicit", pool(map[string]any{"replicas": 5}), int64(5), true},
		{"external owner", pool(map[string]any{"replicas_managed_externally": true}), nil, true},
		{"unknown owner", pool(map[string]any{"replicas_managed_externally": pt.Unknown}), nil, true},
		{"unknown name", pool(map[string]any{"name": pt.Unknown}), int64(1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planned, diags := s.PlanCreate(t, warmpool.ResourceType, tc.cfg)
			if errs := pt.Errors(diags); len(errs) > 0 {
				t.Fatal(pt.Describe(errs))
			}
			checkInt(t, planned["replicas"], tc.replicas)
			if planned["selector"].IsKnown() != tc.selectorKnow {
				t.Errorf("selector = %v, known want %v", planned["selector"], tc.selectorKnow)
			}
			if tc.selectorKnow {
				var sel string
				_ = planned["selector"].As(&sel)
				if sel != sandboxapi.WarmPoolSelector("python-pool") {
					t.Errorf("selector = %q", sel)
				}
			}
			var strategy string
			_ = planned["update_strategy"].As(&strategy)
			if strategy != "OnReplenish" && tc.cfg["update_strategy"] == nil {
				t.Errorf("update_strategy = %q, want the default", strategy)
			}
			if planned["ready_replicas"].IsKnown() {
				t.Errorf("ready_replicas = %v, want unknown until applied", planned["ready_replicas"])
			}
		})
	}
	if n := kube.RequestCount() - before; n != 0 {
		t.Errorf("planning sent %d requests", n)
	}
}

func checkInt(t *testing.T, v tftypes.Value, want any) {
	t.Helper()
	if want == nil {
		if v.IsKnown() {
			t.Errorf("value = %v, want unknown", v)
		}
		return
	}
	if !v.IsKnown() || v.IsNull() {
		t.Fatalf("value = %v, want %v", v, want)
	}
	var f big.Float
	if err := v.As(&f); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Int64(); got != want {
		t.Errorf("value = %d, want %v", got, want)
	}
}
