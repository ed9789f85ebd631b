package testenv

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/sandboxsim"
)

// DefaultController is the stand-in for the agent-sandbox controller of the
// default release profile (releases.Default). Leader election stays on, so
// an instance started by a package's acctest.Main against a cluster where
// the testenv command already runs one simply waits its turn.
var DefaultController = SimController(releases.Default)

// SimController is the stand-in controller behaving as the profile's
// release does (see sandboxsim.Options.Profile). OptionsFromEnv uses it
// unless AGENTSANDBOX_TEST_NO_SIM=1.
func SimController(p releases.Profile) Controller {
	return ControllerFunc{
		Label: "sandboxsim as release profile " + p.Name + " (test-only stand-in, not the upstream controller)",
		Fn: func(ctx context.Context, cfg *rest.Config, reconciling func()) error {
			return sandboxsim.Run(ctx, cfg, sandboxsim.Options{OnStartedLeading: reconciling, Profile: p})
		},
	}
}
