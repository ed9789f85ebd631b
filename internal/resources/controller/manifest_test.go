package controller

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

func mustParse(t *testing.T, source, text string) []object {
	t.Helper()
	objs, err := parseManifest(manifestFile{Source: source, Data: []byte(text)})
	if err != nil {
		t.Fatalf("parse %s: %v", source, err)
	}
	return objs
}

func keysOf(objs []object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, keyOf(o.Unstructured).String())
	}
	return out
}

// TestParseManifest_Bundles parses every offline release asset: object
// counts per shape, and positions pointing at the object's first line.
func TestParseManifest_Bundles(t *testing.T) {
	want := map[string]int{
		"v0.5.6/" + assetAll: 15, "v1.0.3/" + assetAll: 12,
		"v0.5.0/" + assetLegacyCore: 10, "v0.5.0/" + assetExtensions: 6,
	}
	for _, v := range bundles.Versions() {
		assets, err := bundles.Assets(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range assets {
			data, err := bundles.Read(v, a)
			if err != nil {
				t.Fatal(err)
			}
			objs := mustParse(t, v+"/"+a, string(data))
			if n, ok := want[v+"/"+a]; ok && len(objs) != n {
				t.Errorf("%s/%s: %d objects, want %d: %v", v, a, len(objs), n, keysOf(objs))
			}
			lines := strings.Split(string(data), "\n")
			for _, o := range objs {
				if o.Line < 1 || o.Line > len(lines) || !strings.HasPrefix(lines[o.Line-1], "apiVersion:") && !strings.HasPrefix(lines[o.Line-1], "kind:") {
					t.Errorf("%s: %s points at line %d: %q", v+"/"+a, keyOf(o.Unstructured), o.Line, lines[min(max(o.Line-1, 0), len(lines)-1)])
				}
			}
		}
	}
}

// TestMergeFiles_LegacyReleaseEqualsAllInOne: the ≤ v0.5.1 pair (v0.5.0's) applied in
// order yields the same objects as the later all-in-one asset, with the
// controller Deployment taken from extensions.yaml (--extensions).
func TestMergeFiles_LegacyReleaseEqualsAllInOne(t *testing.T) {
	core, _ := bundles.Read("v0.5.0", assetLegacyCore)
	ext, _ := bundles.Read("v0.5.0", assetExtensions)
	all, _ := bundles.Read("v0.5.6", assetAll)
	merged := mergeFiles([][]object{mustParse(t, "manifest.yaml", string(core)), mustParse(t, "extensions.yaml", string(ext))})
	got, want := keysOf(merged), keysOf(mustParse(t, "all", string(all)))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("merged legacy objects differ from the all-in-one:\n got %v\nwant %v", got, want)
	}
	for _, o := range merged {
		if o.GetKind() != "Deployment" {
			continue
		}
		if o.Source != "extensions.yaml" {
			t.Errorf("the Deployment comes from %s, want extensions.yaml (applied last)", o.Source)
		}
		args, _, _ := nestedStrings(o.Object, "spec", "template", "spec", "containers", 0, "args")
		if !slices.Contains(args, "--extensions") {
			t.Errorf("merged Deployment args %v lack --extensions", args)
		}
	}
}

func TestParseManifest_Shapes(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		keys  []string
		docs  []int
		lines []int
	}{
		{
			name: "leading separator and comment header",
			text: "---\n# header\n\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
			keys: []string{`Namespace "a"`}, docs: []int{1}, lines: []int{4},
		},
		{
			name: "empty documents are counted, not parsed",
			text: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# nothing\n---\n--- # trailing comment\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n---\n",
			keys: []string{`Namespace "a"`, `Namespace "b"`}, docs: []int{1, 4}, lines: []int{1, 9},
		},
		{
			name: "null document",
			text: "~\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
			keys: []string{`Namespace "a"`}, docs: []int{2}, lines: []int{3},
		},
		{
			name: "List is expanded",
			text: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ServiceAccount\n  metadata: {name: s, namespace: ns}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c, namespace: ns}\n",
			keys: []string{`ServiceAccount "ns/s"`, `ConfigMap "ns/c"`}, docs: []int{1, 1}, lines: []int{1, 1},
		},
		{
			name: "namespace of a cluster-scoped kind is dropped",
			text: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: ignored}\n",
			keys: []string{`ClusterRole.rbac.authorization.k8s.io "r"`}, docs: []int{1}, lines: []int{1},
		},
		{
			name: "custom kinds keep what they say",
			text: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
			keys: []string{`Widget.example.com "w"`}, docs: []int{1}, lines: []int{1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := mustParse(t, "m.yaml", c.text)
			if got := keysOf(objs); !slices.Equal(got, c.keys) {
				t.Fatalf("objects %v, want %v", got, c.keys)
			}
			for i, o := range objs {
				if o.Doc != c.docs[i] || o.Line != c.lines[i] || o.Source != "m.yaml" {
					t.Errorf("%s at %s, want document %d line %d", keysOf(objs)[i], o.where(), c.docs[i], c.lines[i])
				}
			}
		})
	}
}

func TestParseManifest_Errors(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n"
	cases := []struct{ name, text, want string }{
		{"broken YAML", ns + "# c\napiVersion: v1\nkind: ConfigMap\nmetadata: [x\n", "m.yaml, document 2 (line 7): not valid YAML: line 9:"},
		{"duplicate key", ns + "apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: c, namespace: a}\n", "document 2 (line 6): not valid YAML"},
		{"scalar", ns + "just text\n", "document 2 (line 6): expected a Kubernetes object"},
		{"no apiVersion", "kind: Namespace\nmetadata: {name: a}\n", "document 1 (line 1): apiVersion is missing"},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", "kind is missing"},
		{"no name", "apiVersion: v1\nkind: Namespace\nmetadata: {}\n", "Namespace has no metadata.name"},
		{"generateName", "apiVersion: v1\nkind: Namespace\nmetadata: {generateName: a-}\n", "metadata.generateName"},
		{"bad apiVersion", "apiVersion: a/b/c\nkind: Thing\nmetadata: {name: a}\n", `invalid apiVersion "a/b/c"`},
		{"namespaced without namespace", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", `Service "s" has no metadata.namespace`},
		{"defined twice", ns + "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n", `document 2 (line 6): Namespace "a" is defined twice (first in document 1)`},
		{"empty", "# nothing here\n---\n", "m.yaml: contains no Kubernetes objects"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseManifest(manifestFile{Source: "m.yaml", Data: []byte(c.text)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestSplitDocuments_LongLines(t *testing.T) {
	// CRD schemas carry long description lines; bufio's default limit
	// (64 KiB) must not cut them.
	long := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\ndata:\n  k: " + strings.Repeat("x", 200_000) + "\n"
	objs := mustParse(t, "m.yaml", long)
	if len(objs) != 1 {
		t.Fatalf("%d objects", len(objs))
	}
	if v, _, _ := nestedStrings(objs[0].Object, "data", "k"); len(v) != 1 || len(v[0]) != 200_000 {
		t.Errorf("long value cut")
	}
	if !bytes.Contains([]byte(long), []byte("xxx")) {
		t.Fatal("unreachable")
	}
}

// nestedStrings reads a string or list of strings at a path that may go
// through list indexes (ints).
func nestedStrings(obj map[string]any, path ...any) ([]string, bool, error) {
	var cur any = obj
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false, nil
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false, nil
			}
			cur = l[k]
		}
	}
	switch v := cur.(type) {
	case string:
		return []string{v}, true, nil
	case []any:
		var out []string
		for _, e := range v {
			s, _ := e.(string)
			out = append(out, s)
		}
		return out, true, nil
	}
	return nil, false, nil
}
