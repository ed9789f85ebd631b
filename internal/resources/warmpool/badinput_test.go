package warmpool_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The wide bad-input table of agentsandbox_warm_pool (issue 13), refused at
// validate on the exact attribute with nothing sent; the first cases are
// badPoolInputs in plan_test.go.
func TestBadInputWideTable(t *testing.T) {
	p := func(k string, v any) map[string]any {
		return map[string]any{"name": "python-pool", "namespace": "agents", "template": "python", k: v}
	}
	cases := []pt.BadInput{
		pt.Refused("fractional replicas", p("replicas", big.NewFloat(1.5)), "replicas", "whole number", "1.5", "1 or 2"),
		pt.Refused("fractional replicas below one", p("replicas", big.NewFloat(0.5)), "replicas", "whole number", "0 or 1"),
		pt.Refused("empty name", p("name", ""), "name"),
		pt.Refused("name ending in a dash", p("name", "pool-"), "name", `"pool-"`),
		pt.Refused("empty namespace", p("namespace", ""), "namespace"),
		pt.Refused("empty template", p("template", ""), "template"),
		pt.Refused("template with a slash", p("template", "agents/python"), "template", `"agents/python"`),
		pt.Refused("template with capitals", p("template", "Python"), "template", `"Python"`),
		pt.Refused("update strategy empty", p("update_strategy", ""), "update_strategy"),
		pt.Refused("label value too long", p("labels", map[string]string{"team": strings.Repeat("a", 64)}), `labels["team"]`),
	}
	pt.New(t, provider.New("test")).ExpectRefused(t, warmpool.ResourceType, cases)
	t.Logf("agentsandbox_warm_pool: %d refused at validate (this table)", len(cases))
}
