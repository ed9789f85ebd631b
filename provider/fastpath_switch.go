package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// FastPathVar is the environment variable that takes the fast path
// (package fastpath) out of the provider: "off" hands every call to
// terraform-plugin-framework, "on" (or unset, or empty) keeps it. It is
// read once, when the provider's server is built (NewProtocol6): at the
// start of each provider process Terraform runs, and for every server an
// acceptance-test factory builds.
//
// Anything else is a configuration error that every ValidateProviderConfig
// and ConfigureProvider reports, naming the variable and its value, rather
// than an exit at start: Terraform shows a plugin's start-up failure as
// "failed to instantiate provider" / "Unrecognized remote plugin message"
// and keeps its standard error for TF_LOG, so the reason would be lost,
// while a diagnostic stops validate, plan and apply with the message in
// front of the user. Until then (and since nothing can be planned with such
// a process) the chain is built without the fast path.
//
// Not a provider attribute: the chain of servers exists before Terraform
// sends the provider's configuration (the validation of every resource
// comes first, and is among the calls the fast path answers), the switch is
// about this binary rather than the infrastructure a configuration
// describes, and an attribute would ride along in modules and in the
// provider configuration the plan markers hash.
const FastPathVar = "AGENTSANDBOX_FASTPATH"

// FastPath reports whether a server built now has the fast path, from the
// process environment; err says why FastPathVar's value is refused (the
// server then has none).
func FastPath() (on bool, err error) {
	s := readFastPathSetting(osLookupEnv)
	if s.invalid {
		return false, s.err()
	}
	return s.on, nil
}

// fastPathSetting is FastPathVar as a server was built with it.
type fastPathSetting struct {
	on      bool
	invalid bool
	value   string
	logged  *sync.Once
}

func readFastPathSetting(lookupEnv func(string) (string, bool)) fastPathSetting {
	v, _ := lookupEnv(FastPathVar)
	s := fastPathSetting{value: v, logged: &sync.Once{}}
	switch v {
	case "", "on":
		s.on = true
	case "off":
	default:
		s.invalid = true
	}
	return s
}

func (s fastPathSetting) err() error {
	return fmt.Errorf("%s=%q: the value must be \"on\" (the default) or \"off\" (every call answered by terraform-plugin-framework)", FastPathVar, s.value)
}

// report logs once, at INFO, which path the process's calls take, and adds
// the configuration error of an invalid value to diags.
func (s fastPathSetting) report(ctx context.Context, diags *diag.Diagnostics) {
	if s.logged != nil {
		s.logged.Do(func() {
			switch {
			case s.invalid:
				tflog.Error(ctx, "invalid "+FastPathVar+"; the fast path is not in use", map[string]any{"value": s.value})
			case s.on:
				tflog.Info(ctx, "fast path in use: unchanged plans, reads, upgrades and validations may be answered in front of the framework ("+FastPathVar+"=off takes it out)")
			default:
				tflog.Info(ctx, "fast path off ("+FastPathVar+"=off): every call is answered by terraform-plugin-framework")
			}
		})
	}
	if s.invalid {
		diags.AddError("Invalid "+FastPathVar,
			fmt.Sprintf("The environment variable %s is %q. It must be \"on\" (the default: the provider's fast path answers what it can prove) or \"off\" (every call is answered by terraform-plugin-framework); unset it or set one of those.", FastPathVar, s.value))
	}
}
