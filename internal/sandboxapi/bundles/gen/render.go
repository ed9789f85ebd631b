package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/crds"
)

// object is one Kubernetes object as generic JSON data. Everything is encoded
// from this form, so key order is always sorted and numbers keep their exact
// text (json.Number).
type object = map[string]any

// Indexes into the CRD list, which follows sandboxapi.CRDNames.
const (
	sandboxes = iota
	sandboxClaims
	sandboxTemplates
	sandboxWarmPools
)

// Conversion webhook wiring of the v0.5.x CRDs. The controller fills in the
// caBundle at start-up, so the bundle leaves it out.
const (
	webhookServiceName = "agent-sandbox-webhook-service"
	webhookPath        = "/convert"
	webhookPort        = 443
)

// loadCRDs builds the four CRDs of a release from the generated files: the
// v1beta1 CRD as is for v1.0; for v0.5.x, v1beta1 (served, stored) followed by
// the deprecated v1alpha1 (served, not stored) and the Webhook conversion.
func loadCRDs(r release) ([]object, error) {
	var out []object
	for _, name := range sandboxapi.CRDNames() {
		crd, err := readYAML(crds.FileName(name))
		if err != nil {
			return nil, err
		}
		spec, beta, err := onlyVersion(crd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if r.preV052Schema {
			if err := stripPreV052(name, beta); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if r.webhook {
			alphaCRD, err := readYAML("v1alpha1/" + crds.FileName(name))
			if err != nil {
				return nil, err
			}
			_, alpha, err := onlyVersion(alphaCRD)
			if err != nil {
				return nil, fmt.Errorf("v1alpha1 %s: %w", name, err)
			}
			alpha["storage"] = false
			spec["versions"] = []any{beta, alpha}
			spec["conversion"] = object{
				"strategy": "Webhook",
				"webhook": object{
					"conversionReviewVersions": []any{"v1", "v1beta1"},
					"clientConfig": object{
						"service": object{
							"name":      webhookServiceName,
							"namespace": namespaceName,
							"path":      webhookPath,
							"port":      webhookPort,
						},
					},
				},
			}
		}
		out = append(out, crd)
	}
	return out, nil
}

// onlyVersion returns the spec of a generated CRD and its single version.
func onlyVersion(crd object) (spec, version object, err error) {
	spec, err = field(crd, "spec")
	if err != nil {
		return nil, nil, err
	}
	versions, ok := spec["versions"].([]any)
	if !ok || len(versions) != 1 {
		return nil, nil, fmt.Errorf("generated CRD must have exactly one version, has %v", spec["versions"])
	}
	version, ok = versions[0].(object)
	if !ok {
		return nil, nil, fmt.Errorf("version is a %T", versions[0])
	}
	return spec, version, nil
}

// field walks nested maps by key.
func field(o object, path ...string) (object, error) {
	for _, key := range path {
		next, ok := o[key].(object)
		if !ok {
			return nil, fmt.Errorf("no object at %q of %v", key, path)
		}
		o = next
	}
	return o, nil
}

// stripPreV052 removes from a v1beta1 version what upstream added in v0.5.2.
func stripPreV052(crdName string, version object) error {
	schema, err := field(version, "schema", "openAPIV3Schema")
	if err != nil {
		return err
	}
	switch crdName {
	case "sandboxes.agents.x-k8s.io":
		spec, err := field(schema, "properties", "spec")
		if err != nil {
			return err
		}
		delete(spec, "x-kubernetes-validations")
	case "sandboxwarmpools.extensions.agents.x-k8s.io":
		status, err := field(schema, "properties", "status", "properties")
		if err != nil {
			return err
		}
		delete(status, "observedGeneration")
	}
	return nil
}

// readYAML decodes one generated CRD file into generic data.
func readYAML(file string) (object, error) {
	data, err := crds.FS.ReadFile(file)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return decodeJSON(js)
}

func decodeJSON(js []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var o object
	if err := dec.Decode(&o); err != nil {
		return nil, err
	}
	return o, nil
}

// toObject turns a typed API object into generic data, dropping what the
// typed structs always encode but a manifest should not carry: the status
// block and empty spec/strategy stubs.
func toObject(typed any) object {
	js, err := json.Marshal(typed)
	if err != nil {
		panic(err) // only our own literal objects come here
	}
	o, err := decodeJSON(js)
	if err != nil {
		panic(err)
	}
	delete(o, "status")
	if spec, ok := o["spec"].(object); ok {
		if s, ok := spec["strategy"].(object); ok && len(s) == 0 {
			delete(spec, "strategy")
		}
		if len(spec) == 0 {
			delete(o, "spec")
		}
	}
	return o
}

// encode renders one asset file: a header comment, then the documents
// separated by "---" lines.
func encode(r release, asset string, docs []object) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, header, r.version, asset, r.version)
	for i, doc := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

var header = strings.TrimLeft(`
# Offline stand-in for the agent-sandbox %s release asset %q.
#
# Generated by terraform-provider-agentsandbox (internal/sandboxapi/bundles/gen)
# from the project's own CRDs and its own RBAC, Service and Deployment
# definitions. It is shaped like the upstream release asset (same objects,
# names, API versions and image reference) but it is NOT upstream's file; use
# the real asset from
# https://github.com/kubernetes-sigs/agent-sandbox/releases/tag/%s
# to install the real controller.
#
# DO NOT EDIT: run go generate ./internal/sandboxapi/...
`, "\n")
