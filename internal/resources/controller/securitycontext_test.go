package controller_test

import (
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// TestRootCheckJudgesEffectiveSettings: the kubelet starts the controller's
// container with the container's run_as_user and run_as_non_root where set,
// else the pod's; a root user at one level overridden at the other is
// accepted, and so is a combination an unknown value could still make
// valid (the refusals are rows of TestBadInputWideTable).
func TestRootCheckJudgesEffectiveSettings(t *testing.T) {
	s := pt.New(t, provider.New("test"))
	for name, ctl := range map[string]map[string]any{
		"pod root, container non-root user": {
			"pod_security_context":       map[string]any{"run_as_non_root": true, "run_as_user": 0},
			"container_security_context": map[string]any{"run_as_user": 65532},
		},
		"pod root, container allows root": {
			"pod_security_context":       map[string]any{"run_as_non_root": true, "run_as_user": 0},
			"container_security_context": map[string]any{"run_as_non_root": false},
		},
		"container root, pod non-root only": {
			"pod_security_context":       map[string]any{"run_as_non_root": false},
			"container_security_context": map[string]any{"run_as_user": 0},
		},
		// Known only after apply: judged then, not taken as unset.
		"pod root, container user unknown": {
			"pod_security_context":       map[string]any{"run_as_user": 0},
			"container_security_context": map[string]any{"run_as_non_root": true, "run_as_user": pt.Unknown},
		},
		"container root, pod run_as_non_root unknown": {
			"pod_security_context":       map[string]any{"run_as_non_root": pt.Unknown},
			"container_security_context": map[string]any{"run_as_user": 0},
		},
		"container settings unknown as a whole": {
			"pod_security_context":       map[string]any{"run_as_non_root": true, "run_as_user": 0},
			"container_security_context": pt.Unknown,
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := map[string]any{"version": "v0.5.6", "controller": ctl}
			if errs := pt.Errors(s.ValidateResource(t, "agentsandbox_controller", cfg)); len(errs) > 0 {
				t.Errorf("refused: %s", pt.Describe(errs))
			}
		})
	}
}
