package selfstats

import "os"

// QuietSDKLogsUnlessAsked turns off the plugin SDK's own log output
// (terraform-plugin-go and terraform-plugin-framework) when nobody will
// read it, and reports whether it did.
//
// Those loggers default to TRACE when their variables are unset
// (terraform-plugin-log tfsdklog.NewRootSDKLogger: NoLevel becomes Trace),
// and the provider writes every line as JSON to stderr for Terraform to
// parse and then discard unless TF_LOG or TF_LOG_PROVIDER asks for it. The
// framework logs several lines per attribute it validates or plans: in a
// profile of `terraform plan -refresh=false` of 150 objects (make bench
// -profile) hclog's JSON encoding was 16-21 % of the provider's CPU, and
// Terraform spent more parsing it.
//
// Nothing changes when any Terraform or SDK log variable is set: whoever
// debugs with TF_LOG=TRACE still gets every line.
func QuietSDKLogsUnlessAsked() bool {
	for _, v := range []string{
		"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH",
		"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK",
		"TF_ACC_LOG_PATH", "TF_LOG_PATH_MASK",
	} {
		if os.Getenv(v) != "" {
			return false
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		_ = os.Setenv(v, "OFF")
	}
	return true
}
