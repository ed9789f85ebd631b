package main

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	got := wrap("GKE: an EMULATOR of the container/v1 API (internal/testing/gkeemu, not Google) at http://127.0.0.1:1/", 40, "  - ", "    ")
	want := "  - GKE: an EMULATOR of the container/v1\n    API (internal/testing/gkeemu, not\n    Google) at http://127.0.0.1:1/"
	if got != want {
		t.Errorf("wrap =\n%s\nwant\n%s", got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		if len(l) > 40 {
			t.Errorf("line longer than 40: %q", l)
		}
	}
	if got := wrap("averyveryverylongwordthatdoesnotfit", 10, "- ", "  "); got != "- averyveryverylongwordthatdoesnotfit" {
		t.Errorf("long word: %q", got)
	}
}
