package controller

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// manifestFile is one fetched (or inline) manifest: its bytes and, for
// messages, where they came from.
type manifestFile struct {
	// Source is the URL, or "the inline manifest".
	Source string
	Data   []byte
}

// object is one Kubernetes object of the bundle, with where it was
// written, so that every error about it can point at the document.
type object struct {
	*unstructured.Unstructured
	Source string
	// Doc is the 1-based position of the YAML document in its source, Line
	// the line it starts on.
	Doc, Line int
}

func (o object) where() string {
	return fmt.Sprintf("%s, document %d (line %d)", o.Source, o.Doc, o.Line)
}

// objectKey identifies an object independently of the API version it is
// written in: the same Deployment in apps/v1 and in a later version is one
// object.
type objectKey struct {
	Group, Kind, Namespace, Name string
}

func keyOf(u *unstructured.Unstructured) objectKey {
	gvk := u.GroupVersionKind()
	return objectKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

func (k objectKey) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace == "" {
		return fmt.Sprintf("%s %q", kind, k.Name)
	}
	return fmt.Sprintf("%s %q", kind, k.Namespace+"/"+k.Name)
}

// manifestError is a problem with the manifest itself (as opposed to the
// network or the cluster): it names the source and the document.
type manifestError struct {
	Source    string
	Doc, Line int
	Msg       string
}

func (e *manifestError) Error() string {
	if e.Doc == 0 {
		return fmt.Sprintf("%s: %s", e.Source, e.Msg)
	}
	return fmt.Sprintf("%s, document %d (line %d): %s", e.Source, e.Doc, e.Line, e.Msg)
}

// parseManifest splits a multi-document YAML stream into objects. Empty
// documents (only comments or whitespace) are skipped but still counted,
// so "document N" is what a reader counting the `---` separators finds.
// `kind: List` documents are expanded into their items. Duplicate objects
// within one file are refused: which one would win is ambiguous.
func parseManifest(f manifestFile) ([]object, error) {
	var out []object
	seen := map[objectKey]object{}
	for i, d := range splitDocuments(f.Data) {
		doc, line := i+1, d.line
		fail := func(format string, args ...any) error {
			return &manifestError{Source: f.Source, Doc: doc, Line: line, Msg: fmt.Sprintf(format, args...)}
		}
		if isBlankDocument(d.data) {
			continue
		}
		// Strict: a duplicate key is a broken manifest, not a choice
		// between two values.
		j, err := yaml.YAMLToJSONStrict(d.data)
		if err != nil {
			return nil, fail("not valid YAML: %s", absoluteYAMLLines(err.Error(), d.start))
		}
		var probe any
		if err := json.Unmarshal(j, &probe); err != nil {
			return nil, fail("not valid YAML: %v", err)
		}
		if probe == nil {
			continue // a document holding only `null` or `~`
		}
		m, ok := probe.(map[string]any)
		if !ok {
			return nil, fail("expected a Kubernetes object (a mapping with apiVersion and kind), found %s", describeYAMLValue(probe))
		}
		if err := checkTypeMeta(m); err != nil {
			return nil, fail("%v", err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, fail("not a Kubernetes object: %v", err)
		}
		items := []*unstructured.Unstructured{u}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fail("invalid %s: %v", u.GetKind(), err)
			}
			items = items[:0]
			for i := range list.Items {
				items = append(items, &list.Items[i])
			}
		}
		for _, item := range items {
			if err := checkObject(item); err != nil {
				return nil, fail("%v", err)
			}
			o := object{Unstructured: item, Source: f.Source, Doc: doc, Line: line}
			k := keyOf(item)
			if prev, dup := seen[k]; dup {
				return nil, fail("%s is defined twice (first in document %d)", k, prev.Doc)
			}
			seen[k] = o
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, &manifestError{Source: f.Source, Msg: "contains no Kubernetes objects"}
	}
	return out, nil
}

// checkTypeMeta checks apiVersion and kind before decoding, so that a
// missing one gets a plain message rather than the decoder's.
func checkTypeMeta(m map[string]any) error {
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	switch {
	case apiVersion == "":
		return fmt.Errorf("apiVersion is missing")
	case kind == "":
		return fmt.Errorf("kind is missing")
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return fmt.Errorf("invalid apiVersion %q: %w", apiVersion, err)
	}
	return nil
}

// describeYAMLValue names the YAML type of a decoded value for messages.
func describeYAMLValue(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// checkObject refuses objects the installer can not track, and clears the
// namespace of kinds known to be cluster-scoped (kubectl ignores it too;
// keeping it would address the object at a URL that does not exist).
func checkObject(u *unstructured.Unstructured) error {
	if err := checkTypeMeta(u.Object); err != nil {
		return err // a List item
	}
	switch {
	case u.GetName() == "" && u.GetGenerateName() != "":
		return fmt.Errorf("%s uses metadata.generateName, which can not be tracked across applies; give it a name", u.GetKind())
	case u.GetName() == "":
		return fmt.Errorf("%s has no metadata.name", u.GetKind())
	}
	if m, ok := kube.WellKnownMapping(u.GroupVersionKind()); ok {
		switch {
		case !m.Namespaced:
			u.SetNamespace("")
		case u.GetNamespace() == "":
			return fmt.Errorf("%s %q has no metadata.namespace; the installer does not guess namespaces", u.GetKind(), u.GetName())
		}
	}
	return nil
}

// mergeFiles combines the files of a release in order. An object defined
// again in a later file replaces the earlier definition (as applying the
// files one after the other would: upstream's extensions.yaml redefines the
// controller Deployment with --extensions), keeping the earlier position.
func mergeFiles(files [][]object) []object {
	var out []object
	index := map[objectKey]int{}
	for _, objs := range files {
		for _, o := range objs {
			k := keyOf(o.Unstructured)
			if i, ok := index[k]; ok {
				out[i] = o
				continue
			}
			index[k] = len(out)
			out = append(out, o)
		}
	}
	return out
}

type rawDocument struct {
	data []byte
	// start is the line the document's text starts on (after the `---`),
	// line the first line with content (skipping comments and blanks).
	start, line int
}

// splitDocuments splits a YAML stream at `---` lines, remembering where
// each document starts. A leading comment block before the first object
// (the bundles' header) belongs to the first document, as in YAML.
func splitDocuments(data []byte) []rawDocument {
	var docs []rawDocument
	var cur bytes.Buffer
	start, lineNo := 1, 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if isSeparator(line) {
			docs = append(docs, rawDocument{data: bytes.Clone(cur.Bytes()), start: start, line: start})
			cur.Reset()
			start = lineNo + 1
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	docs = append(docs, rawDocument{data: cur.Bytes(), start: start, line: start})
	// A stream starting with `---` has no document before it.
	if len(docs) > 1 && isBlankDocument(docs[0].data) && docs[0].line == 1 && startsWithSeparator(data) {
		docs = docs[1:]
	}
	// Point a document's line at its first non-blank, non-comment line.
	for i := range docs {
		docs[i].line += leadingSkippable(docs[i].data)
	}
	return docs
}

// yamlLineRE finds the document-relative line numbers in YAML errors.
var yamlLineRE = regexp.MustCompile(`\bline (\d+)`)

// absoluteYAMLLines rewrites "yaml: line 4: ..." (counted within the
// document) into the line of the whole file, which is what an editor
// shows.
func absoluteYAMLLines(msg string, start int) string {
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	return yamlLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return fmt.Sprintf("line %d", start+n-1)
	})
}

func isSeparator(line string) bool {
	if !strings.HasPrefix(line, "---") {
		return false
	}
	rest := strings.TrimSpace(line[3:])
	return rest == "" || strings.HasPrefix(rest, "#")
}

func startsWithSeparator(data []byte) bool {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return isSeparator(string(first))
}

func isBlankDocument(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "#") && t != "..." {
			return false
		}
	}
	return true
}

func leadingSkippable(data []byte) int {
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "#") {
			return n
		}
		n++
	}
	return 0
}
