// Command gen writes, for each Kubernetes API version given, the field names
// of PodSpec and of every core/v1 struct reachable from it, read from that
// version's k8s.io/api source (core/v1/types.go, fetched through the Go
// module proxy with `go mod download`). Package releases prunes the pod
// template schema of a release profile's CRDs to the fields of the
// Kubernetes API the release was built with, so the test world serves what
// the release's CRDs serve (upstream generates them with controller-gen from
// its go.mod's k8s.io/api).
//
//	go run ./gen -out podspec v0.35.4 v0.36.3 v0.37.2
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Fields is one API version's struct fields: type name -> JSON field name
// -> the core/v1 struct type of the field's value (through pointers, slices
// and maps), "" for anything else.
type Fields struct {
	API   string                       `json:"api"`
	Types map[string]map[string]string `json:"types"`
}

func main() {
	out := flag.String("out", ".", "directory to write <version>.json into")
	flag.Parse()
	for _, v := range flag.Args() {
		f, err := read(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen: k8s.io/api %s: %v\n", v, err)
			os.Exit(1)
		}
		b, err := json.MarshalIndent(f, "", " ")
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(filepath.Join(*out, v+".json"), append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

func read(version string) (*Fields, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/api@"+version)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go mod download: %w", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(stdout.Bytes(), &mod); err != nil {
		return nil, fmt.Errorf("reading go mod download's answer: %w", err)
	}
	if mod.Dir == "" {
		return nil, fmt.Errorf("go mod download printed no module directory: %s", stdout.String())
	}
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(mod.Dir, "core", "v1", "types.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	structs := map[string]*ast.StructType{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts, ok := s.(*ast.TypeSpec)
			if !ok {
				continue
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				structs[ts.Name.Name] = st
			}
		}
	}
	f := &Fields{API: "k8s.io/api " + version, Types: map[string]map[string]string{}}
	var visit func(name string) error
	visit = func(name string) error {
		if _, done := f.Types[name]; done {
			return nil
		}
		st, ok := structs[name]
		if !ok {
			return fmt.Errorf("no struct %s in core/v1/types.go", name)
		}
		fields := map[string]string{}
		f.Types[name] = fields
		var add func(st *ast.StructType) error
		add = func(st *ast.StructType) error {
			for _, fl := range st.Fields.List {
				tag := ""
				if fl.Tag != nil {
					tag = reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
				}
				jsonName, _, _ := strings.Cut(tag, ",")
				if tag == "-" {
					continue
				}
				elem := elemType(fl.Type)
				if len(fl.Names) == 0 && jsonName == "" {
					// Embedded and inlined: its fields are this type's.
					inner, ok := structs[elem]
					if !ok {
						return fmt.Errorf("%s embeds %s, not a core/v1 struct", name, elem)
					}
					if err := add(inner); err != nil {
						return err
					}
					continue
				}
				if jsonName == "" {
					return fmt.Errorf("%s.%s has no json name", name, fl.Names[0].Name)
				}
				if _, ok := structs[elem]; !ok {
					elem = ""
				}
				fields[jsonName] = elem
			}
			return nil
		}
		if err := add(st); err != nil {
			return err
		}
		for _, t := range sortedValues(fields) {
			if err := visit(t); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit("PodSpec"); err != nil {
		return nil, err
	}
	return f, nil
}

// elemType is the name of a field type's element: *T, []T, map[K]T -> T;
// a type of another package (metav1.Time) is "pkg.T".
func elemType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return elemType(t.X)
	case *ast.ArrayType:
		return elemType(t.Elt)
	case *ast.MapType:
		return elemType(t.Value)
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok {
			return x.Name + "." + t.Sel.Name
		}
	}
	return ""
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		if v != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
