package tfjsoncmp

import (
	"regexp"
	"strings"
	"testing"
)

var testRules = Rules{
	Tokens:   map[string]string{"uid": "uid", "resource_version": "rv"},
	Patterns: []Pattern{{RE: regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\b`), With: "<time>"}, {RE: regexp.MustCompile(`\bpool-[a-z0-9]{5}\b`), With: "pool-<generated>"}},
}

func TestShow_tokensKeepWhereValuesRepeat(t *testing.T) {
	state := func(uidA, rvA, uidB, rvB, rvPrior string) string {
		return `{"timestamp":"2026-01-02T03:04:05Z","values":{"root_module":{"resources":[
			{"address":"a","values":{"uid":"` + uidA + `","resource_version":"` + rvA + `","created":"2026-05-06T07:08:09Z","pod":"pool-abcde"}},
			{"address":"b","values":{"uid":"` + uidB + `","resource_version":"` + rvB + `"}}]}},
			"prior_state":{"values":{"uid":"` + uidA + `","resource_version":"` + rvPrior + `"}}}`
	}
	norm := func(s string) string {
		t.Helper()
		out, err := New(testRules).Show([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := norm(state("u1", "10", "u2", "11", "10"))
	if b := norm(state("x9", "77", "x8", "78", "77")); a != b {
		t.Errorf("runs that differ only in assigned values differ:\n%s", Diff(a, b, 20))
	}
	// The prior state's resource version is not the object's: a stale
	// value is a difference, not a value to normalise away.
	if b := norm(state("x9", "77", "x8", "78", "76")); a == b {
		t.Error("a stale resource_version normalised away")
	}
	// Two objects sharing a uid is a difference too.
	if b := norm(state("x9", "77", "x9", "78", "77")); a == b {
		t.Error("a repeated uid normalised away")
	}
	for _, want := range []string{`"<plan timestamp>"`, `"<time>"`, `"pool-<generated>"`, `"<uid-1>"`, `"<rv-2>"`} {
		if !strings.Contains(a, want) {
			t.Errorf("normalised show lacks %s:\n%s", want, a)
		}
	}
}

func TestGeneratedName(t *testing.T) {
	for in, want := range map[string]string{
		"data-science-pool-6sh5h":     "data-science-pool-<generated>",
		"python-runtime-x2b9q":        "python-runtime-<generated>",
		"execution-sandbox":           "execution-sandbox",
		"agent-sandbox-system":        "agent-sandbox-system",
		"isolate-execution-sandboxes": "isolate-execution-sandboxes",
		"set-12345":                   "set-12345",  // 1 and 3 are not in the alphabet
		"pool-abcde":                  "pool-abcde", // vowels neither
	} {
		if got := GeneratedName.ReplaceAllString(in, "$1-<generated>"); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestShow_relevantAttributesAreASet(t *testing.T) {
	a, err := New(testRules).Show([]byte(`{"relevant_attributes":[{"resource":"b","attribute":["x"]},{"resource":"a","attribute":["y"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(testRules).Show([]byte(`{"relevant_attributes":[{"resource":"a","attribute":["y"]},{"resource":"b","attribute":["x"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("relevant_attributes in another order differ:\n%s", Diff(a, b, 20))
	}
}

func TestStream_orderAndTimestamps(t *testing.T) {
	a := `{"@timestamp":"2026-01-02T03:04:05.123456Z","type":"refresh_complete","@message":"x.a: Refresh complete after 1s","hook":{"resource":{"addr":"x.a"},"elapsed_seconds":1}}
{"@timestamp":"2026-01-02T03:04:05.2Z","type":"refresh_complete","hook":{"resource":{"addr":"x.b"}}}
`
	b := `{"@timestamp":"2026-01-02T04:04:05Z","type":"refresh_complete","hook":{"resource":{"addr":"x.b"}}}
{"@timestamp":"2026-01-02T04:04:06Z","type":"refresh_complete","@message":"x.a: Refresh complete after 0s","hook":{"resource":{"addr":"x.a"},"elapsed_seconds":0}}
`
	na, err := New(testRules).Stream([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := New(testRules).Stream([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if na != nb {
		t.Errorf("streams differing in order and time differ:\n%s", Diff(na, nb, 20))
	}
	ignored := `{"@timestamp":"2026-01-02T04:04:06Z","type":"diagnostic","diagnostic":{"severity":"warning","summary":"Harness","detail":"x"}}` + "\n"
	if nd, err := New(Rules{IgnoreDiagnostics: []string{"Harness"}}).Stream([]byte(b + ignored)); err != nil || nd != na {
		t.Errorf("an ignored diagnostic is still there (%v):\n%s", err, Diff(na, nd, 20))
	}
	// The lock messages a slow lock adds (seen in CI: a plan's stream with
	// "Acquiring state lock" in one run only).
	slow := `{"@level":"info","@message":"Acquiring state lock. This may take a few moments...","@module":"terraform.ui","@timestamp":"2026-01-02T04:04:04Z","type":"state_lock_acquire"}
{"@level":"info","@message":"Releasing state lock. This may take a few moments...","@module":"terraform.ui","@timestamp":"2026-01-02T04:04:07Z","type":"state_lock_release"}
`
	if ns, err := New(testRules).Stream([]byte(slow + b)); err != nil || ns != na {
		t.Errorf("a slow lock's messages are still there (%v):\n%s", err, Diff(na, ns, 20))
	}
	nc, err := New(testRules).Stream([]byte(strings.Replace(b, "x.a", "x.c", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(na, nc, 20); !strings.Contains(d, "x.c") || !strings.Contains(d, "x.a") {
		t.Errorf("diff of streams differing in one message:\n%s", d)
	}
}
