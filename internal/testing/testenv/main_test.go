package testenv

import (
	"os"
	"testing"
)

// TestMain installs the watchdog hook, as every real entry point does, so
// that TestWatchdog_HarnessKilled exercises a real watchdog process.
func TestMain(m *testing.M) {
	RunWatchdogIfRequested()
	os.Exit(m.Run())
}
