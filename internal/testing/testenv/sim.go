package testenv

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/sandboxsim"
)

// DefaultController is the stand-in for the agent-sandbox controller that
// every environment runs unless AGENTSANDBOX_TEST_NO_SIM=1. Leader election
// stays on, so an instance started by a package's acctest.Main against a
// cluster where the testenv command already runs one simply waits its turn.
var DefaultController Controller = ControllerFunc{
	Label: "sandboxsim (test-only stand-in, not the upstream controller)",
	Fn: func(ctx context.Context, cfg *rest.Config, reconciling func()) error {
		return sandboxsim.Run(ctx, cfg, sandboxsim.Options{OnStartedLeading: reconciling})
	},
}
