// Package tfjsoncmp compares what Terraform itself prints about two runs of
// the same configuration: the machine-readable stream of `terraform plan
// -json` and the JSON of `terraform show -json` (of a saved plan or of the
// state). The fast path's tests use it to hold the provider with the fast
// path and without it (AGENTSANDBOX_FASTPATH=off) to the same plans and
// states, as Terraform sees them.
//
// Two runs apply the same configuration one after the other, so a few
// values legitimately differ; Normaliser replaces exactly those, and
// nothing else, before the texts are compared:
//
//   - the plan's own "timestamp" (show -json of a plan: when it was made)
//     and each stream message's "@timestamp";
//   - how long an operation took, in the stream: a hook's
//     "elapsed_seconds" and the "after Ns" of its message ("Refresh
//     complete after 1s");
//   - the stream's state-lock messages ("type" state_lock_acquire and
//     state_lock_release: "Acquiring state lock. This may take a few
//     moments..."): Terraform prints them only when taking or releasing the
//     lock takes longer than 400ms (terraform v1.13.3
//     internal/command/clistate/state.go:23 LockThreshold, :123 and :150
//     slowmessage.Do), which a loaded machine decides, not the provider;
//     dropped;
//   - the order of the stream's messages: Terraform walks the graph
//     concurrently (-parallelism), so refreshes and planned changes are
//     printed in whatever order they finish; the normalised stream is its
//     messages sorted;
//   - the order of a plan's "relevant_attributes" (show -json): a set of
//     the attributes the configuration's references depend on, which
//     Terraform lists in map order (it differs from one show of the same
//     plan to the next); sorted;
//   - stream diagnostics the caller names (Rules.IgnoreDiagnostics): the
//     test harness's own, e.g. Terraform's warning that dev_overrides are
//     in effect, whose detail lists the overrides in map order;
//   - values the cluster assigns, by attribute name (Rules.Tokens, e.g. a
//     pod's IP addresses): each distinct value becomes "<kind-N>", N
//     counted in order of first appearance within the run, so that two
//     runs agree only when the same attributes hold the same value in the
//     same places (a state holding a stale address would not);
//   - strings matching Rules.Patterns (names with random suffixes a
//     controller generated, GeneratedName), replaced by a fixed text.
//
// The callers name their tokens and patterns and say why each one differs
// between two runs.
package tfjsoncmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Rules are the normalisations of one comparison.
type Rules struct {
	// Tokens maps an attribute (object key) name to a kind: its string
	// values become "<kind-N>" (Normaliser.Show) or "<kind>" (in the
	// unordered stream, Normaliser.Stream).
	Tokens map[string]string
	// Patterns replace every match in every string value (and key) with
	// the replacement, in order.
	Patterns []Pattern
	// IgnoreDiagnostics are the summaries of the stream's diagnostic
	// messages left out (Normaliser.Stream).
	IgnoreDiagnostics []string
}

// Pattern is one replacement of Rules.Patterns.
type Pattern struct {
	RE   *regexp.Regexp
	With string
}

var elapsed = regexp.MustCompile(`\bafter \d+(m\d+)?s\b`)

// GeneratedName matches a name Kubernetes generated from a prefix
// (metadata.generateName: the prefix and five random characters from
// k8s.io/apimachinery/pkg/util/rand's alphabet, which has no vowels and
// none of 0, 1, 3); a Pattern with "$1-<generated>" keeps the prefix.
var GeneratedName = regexp.MustCompile(`\b([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)

// Normaliser normalises the outputs of one run, in the order the run made
// them (the numbering of tokens carries from one output to the next).
type Normaliser struct {
	rules  Rules
	tokens map[string]map[string]string
	// applied counts the values each normalisation changed.
	applied map[string]int
}

// New returns the normaliser of one run.
func New(rules Rules) *Normaliser {
	return &Normaliser{rules: rules, tokens: map[string]map[string]string{}, applied: map[string]int{}}
}

// Applied says how many values each normalisation changed so far, one
// line each, sorted: the ones a comparison really needed.
func (n *Normaliser) Applied() []string {
	var out []string
	for what, count := range n.applied {
		out = append(out, fmt.Sprintf("%s: %d", what, count))
	}
	sort.Strings(out)
	return out
}

// Show normalises the output of `terraform show -json` and returns it as
// indented JSON with sorted keys.
func (n *Normaliser) Show(raw []byte) (string, error) {
	v, err := decode(bytes.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("show -json: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("show -json: not a JSON object")
	}
	if _, ok := m["timestamp"]; ok {
		m["timestamp"] = "<plan timestamp>"
		n.applied["the plan's timestamp"]++
	}
	out, _ := n.walk(v, "", true).(map[string]any) // an object stays one
	if ra, ok := out["relevant_attributes"].([]any); ok {
		keys := make([]string, len(ra))
		for i, e := range ra {
			b, err := json.Marshal(e)
			if err != nil {
				return "", err
			}
			keys[i] = string(b)
		}
		if !sort.IsSorted(byKey{keys, ra}) {
			sort.Sort(byKey{keys, ra})
			n.applied["the order of relevant_attributes"]++
		}
	}
	return encode(out)
}

// Stream normalises the output of `terraform plan -json` (one JSON message
// per line): each message without its "@timestamp", tokens unnumbered (the
// order of first appearance is the order of concurrent events), the
// messages sorted, one per line.
func (n *Normaliser) Stream(out []byte) (string, error) {
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := decode([]byte(line))
		if err != nil {
			return "", fmt.Errorf("plan -json: a line that is not a JSON message: %q: %w", line, err)
		}
		if m, ok := v.(map[string]any); ok {
			if typ := m["type"]; typ == "state_lock_acquire" || typ == "state_lock_release" {
				n.applied[fmt.Sprintf("%v message (slow lock)", typ)]++
				continue
			}
			if _, ok := m["@timestamp"]; ok {
				delete(m, "@timestamp")
				n.applied["@timestamp of a stream message"]++
			}
			if h, ok := m["hook"].(map[string]any); ok {
				if _, ok := h["elapsed_seconds"]; ok {
					h["elapsed_seconds"] = "<elapsed>"
					n.applied["elapsed_seconds of a hook"]++
				}
			}
			if msg, ok := m["@message"].(string); ok && elapsed.MatchString(msg) {
				m["@message"] = elapsed.ReplaceAllString(msg, "after <elapsed>")
				n.applied["\"after Ns\" of a message"]++
			}
			if d, ok := m["diagnostic"].(map[string]any); ok && m["type"] == "diagnostic" && slices.Contains(n.rules.IgnoreDiagnostics, fmt.Sprint(d["summary"])) {
				n.applied["ignored diagnostic "+fmt.Sprintf("%q", d["summary"])]++
				continue
			}
		}
		s, err := json.Marshal(n.walk(v, "", false))
		if err != nil {
			return "", err
		}
		lines = append(lines, string(s))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

func (n *Normaliser) walk(v any, key string, numbered bool) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // numbering in a fixed order
		out := make(map[string]any, len(x))
		for _, k := range keys {
			nk := n.replace(k)
			if _, dup := out[nk]; dup {
				// Keys that differ only where a pattern replaces would
				// hide each other: keep both, apart.
				nk = k
			}
			out[nk] = n.walk(x[k], k, numbered)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.walk(e, key, numbered)
		}
		return out
	case string:
		if kind, ok := n.rules.Tokens[key]; ok && x != "" {
			n.applied["token "+kind+" (attribute "+key+")"]++
			if !numbered {
				return "<" + kind + ">"
			}
			return n.token(kind, x)
		}
		return n.replace(x)
	default:
		return v
	}
}

func (n *Normaliser) token(kind, raw string) string {
	seen := n.tokens[kind]
	if seen == nil {
		seen = map[string]string{}
		n.tokens[kind] = seen
	}
	if t, ok := seen[raw]; ok {
		return t
	}
	t := fmt.Sprintf("<%s-%d>", kind, len(seen)+1)
	seen[raw] = t
	return t
}

func (n *Normaliser) replace(s string) string {
	for _, p := range n.rules.Patterns {
		if p.RE.MatchString(s) {
			s = p.RE.ReplaceAllString(s, p.With)
			n.applied["pattern "+p.RE.String()]++
		}
	}
	return s
}

// byKey sorts vals by keys.
type byKey struct {
	keys []string
	vals []any
}

func (b byKey) Len() int           { return len(b.keys) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.vals[i], b.vals[j] = b.vals[j], b.vals[i]
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func encode(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Diff describes how b differs from a, line by line ("" when they are
// equal): the lines only one side has, in order ("-" a's, "+" b's, with
// their line numbers), at most limit of them.
func Diff(a, b string, limit int) string {
	if a == b {
		return ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	// The longest common subsequence, by dynamic programming: outputs are
	// at most a few thousand lines.
	lcs := make([][]int32, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j, shown := 0, 0, 0
	add := func(s string) {
		if shown < limit {
			out = append(out, s)
		}
		shown++
	}
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			i++
			j++
		case j < len(bl) && (i == len(al) || lcs[i][j+1] >= lcs[i+1][j]):
			add(fmt.Sprintf("+%d: %s", j+1, bl[j]))
			j++
		default:
			add(fmt.Sprintf("-%d: %s", i+1, al[i]))
			i++
		}
	}
	if shown > limit {
		out = append(out, fmt.Sprintf("... %d more differing lines", shown-limit))
	}
	return strings.Join(out, "\n")
}

// Run is what one run printed, normalised, step by step.
type Run struct {
	steps []string
	out   map[string]string
}

// Add records the normalised output of one step. A step whose name says
// "plan -json" is a plan stream, any other a show -json.
func (r *Run) Add(step, out string) {
	if r.out == nil {
		r.out = map[string]string{}
	}
	r.steps = append(r.steps, step)
	r.out[step] = out
}

// Compare fails t for each step whose outputs differ between the runs a
// (shown as "-") and b ("+"), keeping both runs' outputs in a directory
// named in the failure, and returns how many plan streams and show
// outputs it compared.
func Compare(t testing.TB, a, b Run, nameA, nameB string) (plans, shows int) {
	t.Helper()
	if !slices.Equal(a.steps, b.steps) {
		t.Fatalf("the runs made different steps: %v and %v", a.steps, b.steps)
	}
	var keep string
	for _, step := range a.steps {
		if strings.Contains(step, "plan -json") {
			plans++
		} else {
			shows++
		}
		if d := Diff(a.out[step], b.out[step], 40); d != "" {
			if keep == "" {
				keep = keepOutputs(t, map[string]Run{nameA: a, nameB: b})
			}
			t.Errorf("%s: %s (-) and %s (+) differ (both runs' outputs in %s):\n%s", step, nameA, nameB, keep, d)
		}
	}
	return plans, shows
}

// keepOutputs writes the runs' normalised outputs into a directory that
// outlives the test, for a failure to be looked at.
func keepOutputs(t testing.TB, runs map[string]Run) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tfjsoncmp-") //nolint:usetesting // it must outlive the test, to be looked at
	if err != nil {
		t.Fatal(err)
	}
	clean := strings.NewReplacer(" ", "_", "/", "_", ":", "", "(", "", ")", "")
	for name, r := range runs {
		for i, step := range r.steps {
			file := fmt.Sprintf("%02d-%s.%s.json", i, clean.Replace(step), clean.Replace(name))
			if err := os.WriteFile(filepath.Join(dir, file), []byte(r.out[step]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
