package selfstats

import (
	"os"
	"strings"
)

// QuietLogsUnlessAsked turns off log output nobody will read, and reports
// whether it did: the plugin SDK's own loggers (terraform-plugin-go and
// terraform-plugin-framework) and, when providerVar is not empty, the
// provider's own logger, whose level terraform-plugin-go reads from
// providerVar (TF_LOG_PROVIDER_<NAME>, tf6server/server.go:484-499 in
// v0.31.0; ProviderLoggerVar builds the name).
//
// Those loggers default to TRACE when their variables are unset
// (terraform-plugin-log tfsdklog.NewRootSDKLogger and
// NewRootProviderLogger: NoLevel becomes Trace), and the provider writes
// every line as JSON to stderr for Terraform to parse and then discard:
// Terraform's provider logger is off unless TF_LOG_PROVIDER or TF_LOG is
// set (terraform internal/logging/logging.go, providerLogLevel and
// parseLogLevel: an empty level is hclog.Off). The framework logs several
// lines per attribute it validates or plans: in a profile of `terraform
// plan -refresh=false` of 150 objects (make bench -profile) hclog's JSON
// encoding was 16-21 % of the provider's CPU, and Terraform spent more
// parsing it. The provider's own lines are fewer (one per API request,
// one per create, update or delete from the timeouts package: 1.2 MB of
// JSON in a `make bench` run of 150 objects); turning them off changed
// the provider's CPU by a few percent at most (bench/results/s29-quiet200).
//
// Nothing changes when any Terraform or SDK log variable, or providerVar,
// is set: whoever debugs with TF_LOG=TRACE still gets every line. main
// passes no providerVar in debug mode (-debug), where the provider's
// stderr is the developer's terminal.
func QuietLogsUnlessAsked(providerVar string) bool {
	off := []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"}
	if providerVar != "" {
		off = append(off, providerVar)
	}
	for _, v := range append([]string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_ACC_LOG_PATH", "TF_LOG_PATH_MASK"}, off...) {
		if os.Getenv(v) != "" {
			return false
		}
	}
	for _, v := range off {
		_ = os.Setenv(v, "OFF")
	}
	return true
}

// ProviderLoggerVar is the variable terraform-plugin-go reads the level of
// the provider's own logger from, for a provider at registryAddress: the
// address's type, hyphens as underscores, upper-cased after
// TF_LOG_PROVIDER_ (internal/logging/provider.go ProviderLoggerName and
// terraform-plugin-log tflog.WithLevelFromEnv). "" when the address has no
// type, as terraform-plugin-go then reads no variable.
func ProviderLoggerVar(registryAddress string) string {
	typ := registryAddress[strings.LastIndex(registryAddress, "/")+1:]
	if typ == "" {
		return ""
	}
	return "TF_LOG_PROVIDER_" + strings.ToUpper(strings.ReplaceAll(typ, "-", "_"))
}
