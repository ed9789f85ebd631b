package selfstats

import (
	"os"
	"testing"
)

var logVars = []string{
	"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK",
	"TF_ACC_LOG_PATH", "TF_LOG_PATH_MASK",
}

func clearLogVars(t *testing.T) {
	for _, v := range logVars {
		t.Setenv(v, "") // restored after the test
		os.Unsetenv(v)
	}
}

func TestQuietSDKLogs_offWhenNobodyListens(t *testing.T) {
	clearLogVars(t)
	if !QuietSDKLogsUnlessAsked() {
		t.Fatal("did not quiet the SDK logs with no log variable set")
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if got := os.Getenv(v); got != "OFF" {
			t.Errorf("%s = %q, want OFF", v, got)
		}
	}
	if os.Getenv("TF_LOG_PROVIDER") != "" {
		t.Error("the provider's own log level was changed")
	}
}

func TestQuietSDKLogs_untouchedWhenAsked(t *testing.T) {
	for _, set := range logVars {
		t.Run(set, func(t *testing.T) {
			clearLogVars(t)
			t.Setenv(set, "TRACE")
			if QuietSDKLogsUnlessAsked() {
				t.Fatalf("quieted the SDK logs although %s is set", set)
			}
			for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
				if v != set && os.Getenv(v) != "" {
					t.Errorf("%s was set to %q", v, os.Getenv(v))
				}
			}
		})
	}
}
