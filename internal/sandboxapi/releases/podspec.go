package releases

import (
	"embed"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

//go:generate go run ./gen -out podspec v0.35.4 v0.36.3 v0.37.2

// podspecFiles are the PodSpec field sets of the Kubernetes API versions the
// releases were built with, written by ./gen from each k8s.io/api's source.
//
//go:embed podspec/*.json
var podspecFiles embed.FS

// podSpecFields is one Kubernetes API version's PodSpec shape: type name ->
// JSON field -> the core/v1 struct type of its value ("" for a leaf).
type podSpecFields struct {
	API   string                       `json:"api"`
	Types map[string]map[string]string `json:"types"`
}

func loadPodSpecFields(version string) (*podSpecFields, error) {
	b, err := podspecFiles.ReadFile("podspec/" + version + ".json")
	if err != nil {
		return nil, fmt.Errorf("no PodSpec field set for k8s.io/api %s (run go generate in internal/sandboxapi/releases): %w", version, err)
	}
	var f podSpecFields
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("podspec/%s.json: %w", version, err)
	}
	if _, ok := f.Types["PodSpec"]; !ok {
		return nil, fmt.Errorf("podspec/%s.json has no PodSpec", version)
	}
	return &f, nil
}

// prunePodSpec removes from a pod spec schema (the project's, generated from
// its own, newer k8s.io/api) every property the release's Kubernetes API
// does not have, at every depth, so the CRD serves the release's PodSpec.
// It returns the removed properties' paths. A field the release had and
// newer Kubernetes dropped (v0.35's alpha workloadRef) cannot be added
// back, so it is missing from the profile; the provider never writes one.
func (f *podSpecFields) prunePodSpec(s *apiextensionsv1.JSONSchemaProps) []string {
	var removed []string
	var walk func(s *apiextensionsv1.JSONSchemaProps, typ, at string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, typ, at string) {
		if s == nil {
			return
		}
		switch {
		case s.Type == "array" && s.Items != nil:
			walk(s.Items.Schema, typ, at+"[]")
			return
		case len(s.Properties) == 0 && s.AdditionalProperties != nil:
			walk(s.AdditionalProperties.Schema, typ, at+"{}")
			return
		}
		fields := f.Types[typ]
		for name, child := range s.Properties {
			elem, ok := fields[name]
			if !ok {
				delete(s.Properties, name)
				removed = append(removed, at+"."+name)
				continue
			}
			if elem != "" {
				walk(&child, elem, at+"."+name)
				s.Properties[name] = child
			}
		}
	}
	walk(s, "PodSpec", "spec")
	return removed
}
