package acctest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ProviderConfig returns the provider block pointing at the test cluster's
// kubeconfig. It is explicit (rather than relying on KUBECONFIG reaching
// the provider through the environment) so that a test's configuration
// shows exactly what the provider was told.
func ProviderConfig() string {
	return providerConfig(Kubeconfig())
}

func providerConfig(kubeconfig string) string {
	return fmt.Sprintf(`provider %[1]q {
  kubernetes {
    config_path = %[2]s
  }
}
`, ProviderName, HCLString(kubeconfig))
}

// ConfigCompose joins configuration fragments into one configuration, each
// fragment ending in a newline so that blocks never run together.
func ConfigCompose(config ...string) string {
	var b strings.Builder
	for _, c := range config {
		if c == "" {
			continue
		}
		b.WriteString(c)
		if !strings.HasSuffix(c, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// HCLString quotes s as an HCL string literal. It cannot use strconv.Quote:
// HCL has no \x, \a, \b, \f or \v escapes, and it treats "${" and "%{" as
// the start of a template, which must be doubled to stay literal.
func HCLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		case r == utf8.RuneError || !unicode.IsPrint(r):
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08X`, r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
