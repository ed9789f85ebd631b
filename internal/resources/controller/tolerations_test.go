package controller_test

import (
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// TestTolerationsUnknownNotJudged: a toleration whose key, operator or
// effect is known only after apply is not refused at validate (the checks
// are pod_template's, which judge known values only), for the controller
// and the router alike; the same toleration with the value known is.
func TestTolerationsUnknownNotJudged(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	controller := func(tol map[string]any) map[string]any {
		return map[string]any{"version": "v0.5.6", "controller": map[string]any{"tolerations": []any{tol}}}
	}
	router := func(tol map[string]any) map[string]any { return routerCfg("tolerations", []any{tol}) }
	for _, tc := range []struct {
		name            string
		unknown, known  map[string]any
		refusedAt, word string
	}{
		{"key after apply", map[string]any{"key": pt.Unknown, "operator": "Equal", "value": "v"},
			map[string]any{"operator": "Equal", "value": "v"}, "tolerations[0].key", "Exists"},
		{"operator after apply", map[string]any{"operator": pt.Unknown, "value": "v"},
			map[string]any{"operator": "Exists", "key": "k", "value": "v"}, "tolerations[0].value", "Exists"},
		{"effect after apply", map[string]any{"key": "k", "operator": "Exists", "effect": pt.Unknown, "toleration_seconds": 30},
			map[string]any{"key": "k", "operator": "Exists", "effect": "NoSchedule", "toleration_seconds": 30}, "tolerations[0].toleration_seconds", "NoExecute"},
	} {
		for _, r := range []struct {
			typ, prefix string
			cfg         func(map[string]any) map[string]any
		}{{"agentsandbox_controller", "controller.", controller}, {routerType, "", router}} {
			t.Run(r.typ+"/"+tc.name, func(t *testing.T) {
				if errs := pt.Errors(s.ValidateResource(t, r.typ, r.cfg(tc.unknown))); len(errs) > 0 {
					t.Errorf("refused with a value unknown: %s", pt.Describe(errs))
				}
				pt.ExpectErrorAt(t, s.ValidateResource(t, r.typ, r.cfg(tc.known)), r.prefix+tc.refusedAt, tc.word)
			})
		}
	}
}
