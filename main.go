// Command terraform-provider-agentsandbox serves the agentsandbox Terraform
// provider over plugin protocol 6.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

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
	// The SDK's trace logs cost a fifth of the provider's CPU and are
	// discarded by Terraform unless TF_LOG or TF_LOG_PROVIDER is set.
	selfstats.QuietSDKLogsUnlessAsked()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         provider.RegistryAddress,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	stop()
	if err != nil {
		log.Fatal(err)
	}
}
