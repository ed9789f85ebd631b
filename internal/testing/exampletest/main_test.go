package exampletest_test

import (
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

func TestMain(m *testing.M) {
	// Nothing this package starts may reach Google: the terraform processes
	// inherit the isolated environment, and the examples are given the
	// emulator's endpoint and token explicitly.
	emutest.Isolate()
	acctest.Main(m)
}
