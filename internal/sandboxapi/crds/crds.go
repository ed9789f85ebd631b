// Package crds embeds the CustomResourceDefinitions that controller-gen
// generates from the types in ../agents and ../extensions (the generate
// directives are in ../doc.go; never edit the YAML by hand).
//
// The top directory holds one file per CRD with only v1beta1, served and
// stored: exactly what agent-sandbox v1.0 serves, and the canonical schema of
// this project. The v1alpha1 directory holds the same four CRDs with only the
// deprecated v1alpha1 version; it is an input of the v0.5.x bundle generator
// (which merges it with v1beta1 and adds the conversion webhook) and must never
// be installed on its own.
package crds

import (
	"embed"
	"fmt"
	"path"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// FS holds the generated files: "<group>_<plural>.yaml" for v1beta1 and
// "v1alpha1/<group>_<plural>.yaml" for v1alpha1.
//
//go:embed *.yaml v1alpha1/*.yaml
var FS embed.FS

// FileName returns the file name controller-gen uses for a CRD name
// ("sandboxes.agents.x-k8s.io" -> "agents.x-k8s.io_sandboxes.yaml").
func FileName(crdName string) string {
	plural, group, _ := strings.Cut(crdName, ".")
	return group + "_" + plural + ".yaml"
}

// V1beta1 returns the four v1beta1 CRDs, in sandboxapi.CRDNames order.
func V1beta1() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load(".")
}

// V1alpha1 returns the four v1alpha1-only CRDs, in sandboxapi.CRDNames order.
func V1alpha1() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return load("v1alpha1")
}

func load(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range sandboxapi.CRDNames() {
		file := path.Join(dir, FileName(name))
		data, err := FS.ReadFile(file)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if crd.Name != name {
			return nil, fmt.Errorf("%s: holds CRD %q, want %q", file, crd.Name, name)
		}
		out = append(out, crd)
	}
	return out, nil
}
