// Command terraform-provider-agentsandbox serves the agentsandbox Terraform
// provider over plugin protocol 6.
package main

import (
	"flag"
	"log"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/gcpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/selfstats"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// version is set at release time by goreleaser through -ldflags "-X main.version=...".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "start the provider in debug mode for debuggers such as delve; prints TF_REATTACH_PROVIDERS")
	flag.Parse()

	// Profiling and request statistics for benchmarks (see package selfstats);
	// nothing happens unless their environment variables are set.
	stop := selfstats.Start()
	// Fewer garbage collections for the small heap of a provider process
	// (package gcpolicy); GOGC or GOMEMLIMIT in the environment win.
	_, stopGC := gcpolicy.Apply()
	// The SDK's trace logs cost a fifth of the provider's CPU and, like the
	// provider's own, are discarded by Terraform unless TF_LOG or
	// TF_LOG_PROVIDER is set. In debug mode the provider's own logs go to
	// the developer's terminal: those stay.
	providerLogVar := selfstats.ProviderLoggerVar(provider.RegistryAddress)
	if debug {
		providerLogVar = ""
	}
	selfstats.QuietLogsUnlessAsked(providerLogVar)
	if !debug {
		go exitWhenOrphaned(os.Getppid(), 2*time.Second)
	}
	// What providerserver.Serve does, with the fast path in front of the
	// framework's server (provider.NewProtocol6, package fastpath).
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	err := tf6server.Serve(provider.RegistryAddress, provider.NewProtocol6(version), opts...)
	stopGC()
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// exitWhenOrphaned ends the provider once Terraform, its parent, is gone.
// A Terraform killed with SIGKILL (a lost CI runner, the OOM killer) cannot
// stop its plugins, and the provider, re-parented to init, would otherwise
// run on for as long as the machine does. Nothing is lost by exiting: no one
// is left to receive an answer, and the next apply finds what was written
// (see the faults guide, "Interrupted applies").
func exitWhenOrphaned(parent int, every time.Duration) {
	for range time.Tick(every) {
		if os.Getppid() != parent {
			log.Printf("[WARN] terraform (pid %d) is gone; the provider exits", parent)
			os.Exit(1)
		}
	}
}
