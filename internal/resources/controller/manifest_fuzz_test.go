package controller

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseManifest feeds the manifest parser arbitrary bytes. The seed
// corpus (testdata/fuzz/FuzzParseManifest, plus the seeds below) runs as an
// ordinary test in every `go test`; `go test -fuzz=FuzzParseManifest
// -fuzztime=20s ./internal/resources/controller/` explores further.
//
// Properties, whatever the input:
//   - no panic;
//   - an error is a *manifestError naming the source (and, for a problem
//     inside a document, a document number and line that exist);
//   - a success returns at least one object, each with apiVersion, kind and
//     name, the source, a 1-based document number that never decreases and
//     a line that exists, and no object twice;
//   - parsing is deterministic.
func FuzzParseManifest(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\ndata: {k: v}\n---\n# only a comment\n---\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: x}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: x}}\n",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\nmetadata: {name: b}\n",
		"- just\n- a list\n",
		"~\n---\nnull\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\n",
		"\xef\xbb\xbfapiVersion: v1\r\nkind: Namespace\r\nmetadata:\r\n  name: crlf\r\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\ndata: {n: 1e999}\n",
		"--- # separator with a comment\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n--- \n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			t.Skip("inputs are bounded to keep each run fast")
		}
		const source = "fuzz.yaml"
		lines := strings.Count(string(data), "\n") + 1
		docs := len(splitDocuments(data)) + 1
		objs, err := parseManifest(manifestFile{Source: source, Data: data})
		if err != nil {
			var me *manifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *manifestError: %v", err, err)
			}
			if me.Source != source || !strings.HasPrefix(err.Error(), source) {
				t.Fatalf("error does not name the source: %v", err)
			}
			if me.Doc < 0 || me.Doc > docs || (me.Doc > 0 && (me.Line < 1 || me.Line > lines)) {
				t.Fatalf("error names document %d line %d of an input with %d documents and %d lines: %v", me.Doc, me.Line, docs, lines, err)
			}
			if objs != nil {
				t.Fatalf("objects returned with an error")
			}
			return
		}
		if len(objs) == 0 {
			t.Fatal("success without objects")
		}
		seen := map[objectKey]bool{}
		prevDoc := 0
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				t.Fatalf("object without apiVersion, kind or name: %v", o.Object)
			}
			if o.Source != source || o.Doc < 1 || o.Doc < prevDoc || o.Doc > docs || o.Line < 1 || o.Line > lines {
				t.Fatalf("object %s at %s (doc %d line %d; previous doc %d; %d documents, %d lines)", keyOf(o.Unstructured), o.where(), o.Doc, o.Line, prevDoc, docs, lines)
			}
			prevDoc = o.Doc
			k := keyOf(o.Unstructured)
			if seen[k] {
				t.Fatalf("%s returned twice", k)
			}
			seen[k] = true
		}
		again, err := parseManifest(manifestFile{Source: source, Data: data})
		if err != nil || len(again) != len(objs) {
			t.Fatalf("second parse differs: %d objects, %v", len(again), err)
		}
		for i := range objs {
			if !reflect.DeepEqual(objs[i].Object, again[i].Object) {
				t.Fatalf("second parse differs at object %d", i)
			}
		}
	})
}
