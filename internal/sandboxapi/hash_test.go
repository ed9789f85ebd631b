package sandboxapi

import (
	"strings"
	"testing"
)

func TestNameHash(t *testing.T) {
	// Expected values are FNV-1a 32-bit digests computed independently of
	// Go's hash/fnv (the first three are the reference test vectors of the
	// FNV specification).
	cases := []struct{ in, want string }{
		{"", "811c9dc5"},
		{"a", "e40c292c"},
		{"foobar", "bf9cf968"},
		{"sandbox-name", "ab179450"},
		{"my-warm-pool", "034dafb4"}, // one leading zero
		{"sandbox-633", "004575dd"},  // two leading zeros: padding matters
	}
	for _, c := range cases {
		if got := NameHash(c.in); got != c.want {
			t.Errorf("NameHash(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNameHashIsAValidLabelValue(t *testing.T) {
	long := strings.Repeat("x", 253)
	for _, name := range []string{"", "a", long, "ünïcødé"} {
		got := NameHash(name)
		if len(got) != 8 {
			t.Fatalf("NameHash(%q) = %q: want 8 characters", name, got)
		}
		for _, r := range got {
			if !strings.ContainsRune("0123456789abcdef", r) {
				t.Fatalf("NameHash(%q) = %q: not lowercase hex", name, got)
			}
		}
	}
}

func TestSandboxSelector(t *testing.T) {
	if got, want := SandboxSelector("sandbox-name"), "agents.x-k8s.io/sandbox-name-hash=ab179450"; got != want {
		t.Errorf("SandboxSelector = %q, want %q", got, want)
	}
}

func TestWarmPoolSelector(t *testing.T) {
	if got, want := WarmPoolSelector("my-warm-pool"), "agents.x-k8s.io/warm-pool-sandbox=034dafb4"; got != want {
		t.Errorf("WarmPoolSelector = %q, want %q", got, want)
	}
}

func TestTemplateNetworkPolicyName(t *testing.T) {
	if got := TemplateNetworkPolicyName("python"); got != "python-network-policy" {
		t.Errorf("TemplateNetworkPolicyName = %q", got)
	}
}

func TestIsReservedKey(t *testing.T) {
	cases := map[string]bool{
		LabelSandboxNameHash:                  true,
		"agents.x-k8s.io/anything":            true,
		"extensions.agents.x-k8s.io/whatever": true,
		AnnotationV1alpha1SandboxState:        false, // api.agents.x-k8s.io is another domain
		AnnotationSafeToEvict:                 false,
		"app":                                 false,
		"agents.x-k8s.io":                     false, // no slash: not under the prefix
		"example.com/agents.x-k8s.io/x":       false,
	}
	for key, want := range cases {
		if got := IsReservedKey(key); got != want {
			t.Errorf("IsReservedKey(%q) = %v, want %v", key, got, want)
		}
	}
}
