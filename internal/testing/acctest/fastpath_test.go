package acctest

import (
	"slices"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/nestedattr"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The fast path's switch reaches the in-process provider of every
// acceptance test: the factory reads it at each call.
func TestFactory_fastPathSwitch(t *testing.T) {
	for _, c := range []struct {
		value string
		fast  bool
	}{{"off", false}, {"on", true}, {"", true}} {
		t.Run("AGENTSANDBOX_FASTPATH="+c.value, func(t *testing.T) {
			t.Setenv(provider.FastPathVar, c.value)
			srv, err := ProtoV6ProviderFactories[ProviderName]()
			if err != nil {
				t.Fatal(err)
			}
			outer, ok := srv.(*nestedattr.Server)
			if !ok {
				t.Fatalf("the factory's server is a %T", srv)
			}
			if _, fast := outer.Inner.(*fastpath.Server); fast != c.fast {
				t.Errorf("behind nestedattr is a %T; want the fast path: %v", outer.Inner, c.fast)
			}
			if got, want := FastPathEnv(), []string{provider.FastPathVar + "=" + c.value}; !slices.Equal(got, want) {
				t.Errorf("FastPathEnv() = %q, want %q", got, want)
			}
		})
	}
}
