package main

import (
	"fmt"
	"path"
)

// Asset file names, as upstream names them. (Package bundles exports the same
// names; this command cannot import it, since bundles embeds what it writes.)
const (
	assetSandbox    = "sandbox.yaml"
	assetExtensions = "extensions.yaml"
	assetAll        = "sandbox-with-extensions.yaml"
	assetManifest   = "manifest.yaml" // ≤ v0.5.1 name of the core file
)

// release describes the shape of one upstream release that we stand in for.
type release struct {
	// version is the release tag, also the image tag and the directory name.
	version string
	// webhook is the v0.5.x shape: CRDs serve v1alpha1 (deprecated, not
	// stored) next to v1beta1 through a conversion webhook, and the bundle
	// carries the webhook Service, the container port 9443, the Role and
	// RoleBinding for the certificate Secret, and CRD patch rights.
	webhook bool
	// legacyAssets selects the ≤ v0.5.1 asset names: manifest.yaml (core)
	// and extensions.yaml, without the all-in-one file.
	legacyAssets bool
	// preV052Schema drops what upstream's v1beta1 schema gained in v0.5.2:
	// the CEL rule making Sandbox volumeClaimTemplates immutable and the
	// warm pool's status.observedGeneration.
	preV052Schema bool
}

// releases lists the bundles we generate, each in its own directory.
var releases = []release{
	{version: "v0.5.1", webhook: true, legacyAssets: true, preV052Schema: true},
	{version: "v0.5.6", webhook: true},
	{version: "v1.0.7"},
}

// image is the controller image upstream's release tooling substitutes for
// the ko:// placeholder.
func (r release) image() string {
	return "registry.k8s.io/agent-sandbox/agent-sandbox-controller:" + r.version
}

// renderAll renders every asset of every release, keyed "<version>/<asset>".
func renderAll() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, r := range releases {
		assets, err := r.assets()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.version, err)
		}
		for name, docs := range assets {
			data, err := encode(r, name, docs)
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", r.version, name, err)
			}
			out[path.Join(r.version, name)] = data
		}
	}
	return out, nil
}

// assets returns the documents of each asset file of the release.
//
// The flat files (sandbox.yaml or manifest.yaml, then extensions.yaml) follow
// upstream's concatenation of its k8s/ directory: the core file holds the
// namespace, controller, core RBAC and Sandbox CRD; the extensions file holds
// the three extension CRDs, their RBAC and the controller Deployment again with
// --extensions (applied second, it wins). The all-in-one file declares every
// object once, in kustomize's kind order, with the extensions enabled.
func (r release) assets() (map[string][]object, error) {
	crd, err := loadCRDs(r)
	if err != nil {
		return nil, err
	}
	core := []object{
		namespace(),
		serviceAccount(),
		clusterRoleBinding(coreRole),
	}
	if r.webhook {
		core = append(core, certSecretRole(), certSecretRoleBinding())
	}
	core = append(core, metricsService(), deployment(r, false))
	if r.webhook {
		core = append(core, webhookService())
	}
	core = append(core, crd[sandboxes], coreClusterRole(r))

	extensions := []object{
		crd[sandboxClaims], crd[sandboxTemplates], crd[sandboxWarmPools],
		extensionsClusterRole(),
		deployment(r, true),
		clusterRoleBinding(extensionsRole),
	}

	if r.legacyAssets {
		return map[string][]object{
			assetManifest:   core,
			assetExtensions: extensions,
		}, nil
	}

	all := []object{
		namespace(),
		crd[sandboxes], crd[sandboxClaims], crd[sandboxTemplates], crd[sandboxWarmPools],
		serviceAccount(),
	}
	if r.webhook {
		all = append(all, certSecretRole())
	}
	all = append(all, coreClusterRole(r), extensionsClusterRole())
	if r.webhook {
		all = append(all, certSecretRoleBinding())
	}
	all = append(all, clusterRoleBinding(coreRole), clusterRoleBinding(extensionsRole), metricsService())
	if r.webhook {
		all = append(all, webhookService())
	}
	all = append(all, deployment(r, true))

	return map[string][]object{
		assetSandbox:    core,
		assetExtensions: extensions,
		assetAll:        all,
	}, nil
}
