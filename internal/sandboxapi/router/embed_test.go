package router

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestVersionsAndFiles(t *testing.T) {
	if got, want := Versions(), []string{"v0.5.6", "v1.0.1", "v1.0.3"}; !slices.Equal(got, want) {
		t.Fatalf("Versions() = %v, want %v", got, want)
	}
	for _, v := range Versions() {
		for _, f := range Files {
			if _, err := Read(v, f); err != nil {
				t.Errorf("%s: %v", v, err)
			}
		}
	}
	if Has("v0.5.5") || !Has("v1.0.3") {
		t.Error("Has: v0.5.5 has no router, v1.0.3 has one")
	}
	if _, err := Read("v0.5.5", "deployment.yaml"); err == nil || !strings.Contains(err.Error(), "v0.5.5") {
		t.Errorf("Read of a release without a router: %v", err)
	}
}

// TestDefaultIsTheModuleGoModPins: the default router release is the
// release whose API the provider is built against.
func TestDefaultIsTheModuleGoModPins(t *testing.T) {
	data, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\t"+Module+" "+DefaultVersion+"\n") {
		t.Errorf("go.mod does not require %s %s", Module, DefaultVersion)
	}
	if !Has(DefaultVersion) {
		t.Errorf("DefaultVersion %s has no router files", DefaultVersion)
	}
}
