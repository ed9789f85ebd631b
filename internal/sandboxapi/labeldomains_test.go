package sandboxapi

import (
	"slices"
	"testing"
)

// The cases mirror how upstream's controller reads allowed-label-domains
// (cmd/agent-sandbox-controller/main.go:511-528 at v0.5.6) and matches a
// label's domain (extensions/controllers/sandboxclaim_controller.go:1535-1573).
func TestParseAllowedLabelDomains(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        []string
	}{
		{"empty", "", nil},
		{"blanks only", " \n\t ", nil},
		{"separators only", ",\n,\r\n", nil},
		{"one", "example.com", []string{"example.com"}},
		{"commas", "a.example.com,b.example.org", []string{"a.example.com", "b.example.org"}},
		{"newlines, CRLF and trailing newline", "a.example.com\r\nb.example.org\n", []string{"a.example.com", "b.example.org"}},
		{"mixed with spaces and blanks", " a.example.com , ,\n b.example.org ,", []string{"a.example.com", "b.example.org"}},
		{"lower-cased", "Example.COM,TEAM.example.org", []string{"example.com", "team.example.org"}},
		{"duplicates kept", "example.com,example.com", []string{"example.com", "example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseAllowedLabelDomains(tc.value); !slices.Equal(got, tc.want) {
				t.Errorf("ParseAllowedLabelDomains(%q) = %q, want %q", tc.value, got, tc.want)
			}
		})
	}
}

func TestEffectiveLabelDomains(t *testing.T) {
	if got := EffectiveLabelDomains(nil); !slices.Equal(got, []string{DefaultAllowedLabelDomain}) {
		t.Errorf("no domains: %q, want the default", got)
	}
	// A configured list replaces the default.
	if got := EffectiveLabelDomains([]string{"example.com"}); !slices.Equal(got, []string{"example.com"}) {
		t.Errorf("configured: %q, want [example.com] alone", got)
	}
}

func TestLabelDomainAllowed(t *testing.T) {
	allowed := []string{"example.com", "sandbox.users.io"}
	for _, tc := range []struct {
		prefix string
		want   bool
	}{
		{"example.com", true},
		{"team.example.com", true},
		{"a.b.example.com", true},
		{"Team.Example.COM", true}, // the key's domain is lower-cased
		{"sandbox.users.io", true},
		{"myexample.com", false}, // a suffix, not a subdomain
		{"example.com.evil.org", false},
		{"com", false},
		{"users.io", false},
		{"", false},
	} {
		if got := LabelDomainAllowed(tc.prefix, allowed); got != tc.want {
			t.Errorf("LabelDomainAllowed(%q) = %v, want %v", tc.prefix, got, tc.want)
		}
	}
	if LabelDomainAllowed("sandbox.users.io", []string{"example.com"}) {
		t.Error("the default domain is allowed although a configured list replaces it")
	}
}
