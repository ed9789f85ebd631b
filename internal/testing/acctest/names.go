package acctest

import (
	"crypto/rand"
	"strings"
)

const (
	// dns1123LabelMax is the longest DNS-1123 label, the strictest name rule
	// among the objects the provider manages (namespaces, Services named
	// after sandboxes).
	dns1123LabelMax = 63
	randomSuffixLen = 8
	nameAlphabet    = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// RandomName returns "<prefix>-<8 random characters>", a valid DNS-1123
// label (lowercase alphanumerics and '-', starting and ending with an
// alphanumeric, at most 63 characters) whatever the prefix: it is lowered,
// invalid characters become '-', and it is shortened to fit. Test names
// such as t.Name() make good prefixes, so leftovers point at their test.
//
// Names are random rather than sequential because several test binaries
// (one per package) share one cluster at the same time.
func RandomName(prefix string) string {
	p := sanitizePrefix(prefix)
	if p == "" {
		p = "acc"
	}
	return p + "-" + randomString(randomSuffixLen)
}

// sanitizePrefix maps prefix onto the DNS-1123 alphabet, collapses runs of
// '-', drops leading and trailing '-', and leaves room for the suffix.
func sanitizePrefix(prefix string) string {
	var b strings.Builder
	lastDash := true // drops leading dashes
	for _, r := range strings.ToLower(prefix) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			lastDash = false
		case !lastDash:
			b.WriteByte('-')
			lastDash = true
		}
	}
	p := b.String()
	if maxLen := dns1123LabelMax - 1 - randomSuffixLen; len(p) > maxLen {
		p = p[:maxLen]
	}
	return strings.TrimRight(p, "-")
}

func randomString(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf) // never fails on Linux
	for i, c := range buf {
		// 256 is not a multiple of 36; the slight bias is irrelevant for
		// collision avoidance between a handful of concurrent tests.
		buf[i] = nameAlphabet[int(c)%len(nameAlphabet)]
	}
	return string(buf)
}
