package selfstats

import (
	"os"
	"testing"

	"github.com/hashicorp/go-hclog"
)

const providerVar = "TF_LOG_PROVIDER_AGENTSANDBOX"

var logVars = []string{
	"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK",
	"TF_ACC_LOG_PATH", "TF_LOG_PATH_MASK", providerVar,
}

func clearLogVars(t *testing.T) {
	for _, v := range logVars {
		t.Setenv(v, "") // restored after the test
		os.Unsetenv(v)
	}
}

func TestQuietLogs_offWhenNobodyListens(t *testing.T) {
	clearLogVars(t)
	if !QuietLogsUnlessAsked(providerVar) {
		t.Fatal("did not quiet the logs with no log variable set")
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", providerVar} {
		// terraform-plugin-log reads these with hclog.LevelFromString.
		if got := os.Getenv(v); hclog.LevelFromString(got) != hclog.Off {
			t.Errorf("%s = %q, want a level hclog reads as Off", v, got)
		}
	}
	if os.Getenv("TF_LOG_PROVIDER") != "" || os.Getenv("TF_LOG") != "" {
		t.Error("Terraform's own log variables were changed")
	}
}

func TestQuietLogs_providerLogsKeptWithoutItsVariable(t *testing.T) {
	clearLogVars(t)
	if !QuietLogsUnlessAsked("") {
		t.Fatal("did not quiet the SDK logs with no log variable set")
	}
	if got := os.Getenv("TF_LOG_SDK"); got != "OFF" {
		t.Errorf("TF_LOG_SDK = %q, want OFF", got)
	}
	if got := os.Getenv(providerVar); got != "" {
		t.Errorf("%s = %q although no provider variable was passed (debug mode)", providerVar, got)
	}
}

func TestQuietLogs_untouchedWhenAsked(t *testing.T) {
	for _, set := range logVars {
		t.Run(set, func(t *testing.T) {
			clearLogVars(t)
			t.Setenv(set, "TRACE")
			if QuietLogsUnlessAsked(providerVar) {
				t.Fatalf("quieted the logs although %s is set", set)
			}
			for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", providerVar} {
				if v != set && os.Getenv(v) != "" {
					t.Errorf("%s was set to %q", v, os.Getenv(v))
				}
			}
		})
	}
}

func TestProviderLoggerVar(t *testing.T) {
	for addr, want := range map[string]string{
		"registry.terraform.io/agentsandbox/agentsandbox": providerVar,
		"registry.terraform.io/hashicorp/google-beta":     "TF_LOG_PROVIDER_GOOGLE_BETA",
		"example.com/acme/Agent-Sandbox":                  "TF_LOG_PROVIDER_AGENT_SANDBOX",
		"agentsandbox":                                    providerVar,
		"registry.terraform.io/agentsandbox/":             "",
	} {
		if got := ProviderLoggerVar(addr); got != want {
			t.Errorf("ProviderLoggerVar(%q) = %q, want %q", addr, got, want)
		}
	}
}
