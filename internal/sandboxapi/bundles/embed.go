// Package bundles holds the release assets of every agent-sandbox release
// that the Go module proxy serves from v0.5.0 on (sigs.k8s.io/agent-sandbox
// v0.5.0, v0.5.2, v0.5.3, v0.5.5, v0.5.6, v1.0.1 and v1.0.3), for the
// controller installer's tests, the offline demo's mirror, and tests that
// install a release's CRDs as its assets declare them (CRDs).
//
// They are upstream's own files, rendered by ./gen from each release's
// downloaded module (its k8s/ directory) the way upstream's release tool,
// dev/tools/release, builds the assets it attaches to a GitHub release:
// the flat assets are the k8s/ files concatenated as the tool does, and
// sandbox-with-extensions.yaml is k8s/kustomization.yaml rendered by
// kustomize; in all of them the ko:// image placeholder is replaced by
// registry.k8s.io/agent-sandbox/agent-sandbox-controller:<tag>. Nothing is
// added, hardened or left out. ./gen/render.go cites the sources of each
// step. Two caveats: the files could not be compared with the assets on
// GitHub (not reachable from where they were generated), and
// sandbox-with-extensions.yaml comes from kustomize v5.8 (kubectl v1.37's),
// while the kustomize that rendered the published file is not recorded, so
// its formatting, not its objects, may differ from the published one.
//
// Releases and their assets:
//
//	v0.5.0                   manifest.yaml + extensions.yaml (the names up to v0.5.1)
//	v0.5.2 ... v0.5.6        sandbox.yaml + extensions.yaml + sandbox-with-extensions.yaml
//	v1.0.1, v1.0.3           sandbox.yaml + extensions.yaml + sandbox-with-extensions.yaml
//
// v0.5.x serves v1beta1 (storage) and v1alpha1 (deprecated) through a
// conversion webhook and ships the webhook Service plus a Role/RoleBinding for
// the controller's certificate Secret (which the controller creates itself).
// v1.0.x serves only v1beta1 and has none of the webhook objects. Releases
// the proxy does not serve (v0.5.1, v0.5.4, v1.0.0, v1.0.2, anything after
// v1.0.3) have no bundle.
//
// The provider binary must not import this package: it embeds megabytes of
// YAML and exists only for tests and the demo.
package bundles

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:generate go run ./gen -out .

// Asset file names, as upstream names them.
const (
	// AssetSandbox is the core file (≥ v0.5.2): upstream's k8s/controller.yaml,
	// the Sandbox CRD and k8s/rbac.generated.yaml.
	AssetSandbox = "sandbox.yaml"
	// AssetExtensions is the extensions file: the three extension CRDs,
	// k8s/extensions-rbac.generated.yaml, k8s/extensions.controller.yaml (the
	// controller Deployment again, with --extensions) and k8s/extensions.yaml,
	// meant to be applied after the core file.
	AssetExtensions = "extensions.yaml"
	// AssetAll is the all-in-one, collision-free rendering of
	// k8s/kustomization.yaml (≥ v0.5.2).
	AssetAll = "sandbox-with-extensions.yaml"
	// AssetManifest is the ≤ v0.5.1 name of the core file.
	AssetManifest = "manifest.yaml"
)

//go:embed v*/*.yaml
var files embed.FS

// FS returns the bundle files as "<version>/<asset>".
func FS() fs.FS { return files }

// Versions lists the release versions available offline, oldest first.
func Versions() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.SortFunc(out, compareVersions)
	return out
}

// Assets lists the asset file names of one version.
func Assets(version string) ([]string, error) {
	entries, err := files.ReadDir(version)
	if err != nil {
		return nil, fmt.Errorf("no offline bundle for agent-sandbox %s", version)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}

// Read returns one asset of one version, e.g. Read("v0.5.6", AssetAll).
func Read(version, asset string) ([]byte, error) {
	data, err := files.ReadFile(path.Join(version, asset))
	if err != nil {
		return nil, fmt.Errorf("no offline asset %s for agent-sandbox %s", asset, version)
	}
	return data, nil
}

// CRDs returns the four CustomResourceDefinitions of a release as its bundle
// declares them (the Sandbox CRD and the three extension CRDs, never
// modified), in the order the assets hold them: from
// sandbox-with-extensions.yaml where the release has one (v0.5.2 and later),
// else from manifest.yaml followed by extensions.yaml. Each call decodes
// afresh, so callers may modify what they get. It fails for a version
// without a bundle and when the assets do not hold exactly one CRD of each
// of four distinct names.
func CRDs(version string) ([]*unstructured.Unstructured, error) {
	assets := []string{AssetAll}
	if _, err := files.ReadFile(path.Join(version, AssetAll)); err != nil {
		assets = []string{AssetManifest, AssetExtensions}
	}
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, asset := range assets {
		data, err := Read(version, asset)
		if err != nil {
			return nil, err
		}
		objs, err := decode(data)
		if err != nil {
			return nil, fmt.Errorf("agent-sandbox %s %s: %w", version, asset, err)
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			if seen[o.GetName()] {
				return nil, fmt.Errorf("agent-sandbox %s %s: CRD %s declared twice", version, asset, o.GetName())
			}
			seen[o.GetName()] = true
			out = append(out, o)
		}
	}
	if len(out) != 4 {
		return nil, fmt.Errorf("agent-sandbox %s: the bundle holds %d CRDs, want 4", version, len(out))
	}
	return out, nil
}

// decode splits a multi-document YAML file into objects, skipping the empty
// and comment-only documents that upstream's concatenated files contain.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// compareVersions orders "vMAJOR.MINOR.PATCH" strings numerically.
func compareVersions(a, b string) int {
	var x, y [3]int
	_, _ = fmt.Sscanf(a, "v%d.%d.%d", &x[0], &x[1], &x[2])
	_, _ = fmt.Sscanf(b, "v%d.%d.%d", &y[0], &y[1], &y[2])
	return slices.Compare(x[:], y[:])
}
