package sandboxclaim_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxclaim"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The wide bad-input table of agentsandbox_sandbox_claim (issue 13): the
// cases plan_test.go does not have, refused at validate, and what needs the
// current time refused at plan, on the exact attribute with nothing sent.
func TestBadInputWideTable(t *testing.T) {
	c := func(k string, v any) map[string]any {
		return map[string]any{"name": "session", "namespace": "agents", "warm_pool": "python-pool", k: v}
	}
	s := pt.New(t, provider.New("test"))
	atValidate := []pt.BadInput{
		pt.Refused("fractional ttl", c("ttl_seconds_after_finished", big.NewFloat(2.5)), "ttl_seconds_after_finished", "whole number", "2 or 3"),
		pt.Refused("empty warm pool", c("warm_pool", ""), "warm_pool"),
		pt.Refused("warm pool as namespace/name", c("warm_pool", "agents/python-pool"), "warm_pool", `"agents/python-pool"`),
		pt.Refused("shutdown time as a date", c("shutdown_time", "2030-01-02"), "shutdown_time", `"2030-01-02"`),
		pt.Refused("shutdown time as unix seconds", c("shutdown_time", "1893456000"), "shutdown_time", `"1893456000"`),
		pt.Refused("env value missing", c("env", []any{map[string]any{"name": "A"}}), "env[0].value"),
		pt.Refused("volume claim template names repeat", c("volume_claim_templates", []any{
			map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
			map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": "2Gi"}}},
		}), "volume_claim_templates[1].name", "Duplicate volume claim template name"),
		pt.Refused("volume claim template name not a DNS label", c("volume_claim_templates", []any{
			map[string]any{"name": "Data_1", "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
		}), "volume_claim_templates[0].name"),
		pt.Refused("empty volume claim templates", c("volume_claim_templates", []any{}), "volume_claim_templates"),
	}
	s.ExpectRefused(t, sandboxclaim.ResourceType, atValidate)

	ago := func(d time.Duration) string { return time.Now().Add(-d).UTC().Format(time.RFC3339) }
	atPlan := []pt.BadInput{
		pt.Refused("shutdown time an hour ago", c("shutdown_time", ago(time.Hour)), "shutdown_time", "already passed", "new claim"),
		pt.Refused("shutdown time a year ago in another zone", c("shutdown_time", time.Now().Add(-365*24*time.Hour).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)),
			"shutdown_time", "already passed"),
	}
	s.ExpectRefusedAtPlan(t, sandboxclaim.ResourceType, atPlan)
	t.Logf("agentsandbox_sandbox_claim: %d refused at validate, %d at plan (this table)", len(atValidate), len(atPlan))
}
