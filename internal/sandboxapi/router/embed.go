// Package router holds the deploy manifests of upstream's Go sandbox router
// (sandbox-router/deploy/*.yaml of the module sigs.k8s.io/agent-sandbox),
// for every release the Go module proxy serves that has them: v0.5.6,
// v1.0.1 and v1.0.3 (v0.5.5 and older have no sandbox-router/ directory).
// agentsandbox_sandbox_router installs a release's router from these
// files.
//
// They are upstream's files, byte for byte, copied from each release's
// module by ./gen (go generate); gen's test fails when a committed file
// differs from the module's. Unlike package bundles (megabytes of CRDs,
// for tests only), these are a few kilobytes per release and the provider
// embeds them: upstream publishes them as source, not as release assets,
// so there is nothing to download.
//
// What the files say and the provider relies on (cited at v1.0.3):
//
//   - deployment.yaml: Deployment sandbox-router, 2 replicas, image
//     registry.k8s.io/agent-sandbox/sandbox-router-go:latest (a floating tag:
//     upstream publishes no versioned router image the manifest names), the
//     flags --http-bind-address=:8080 --metrics-bind-address=:9090
//     --health-probe-bind-address=:8081 --cluster-domain=cluster.local
//     --proxy-timeout=180s --upstream-max-retries=3 --cache-enabled=true,
//     a restricted container securityContext, and no --authz-mode, so the
//     router runs with its default authorization, allow-all
//     (sandbox-router/config/config.go:341).
//   - rbac.yaml: the Pod-IP cache's ClusterRole and ClusterRoleBinding
//     (pods get/list/watch); rbac-tokenreview.yaml: the ClusterRoleBinding
//     to system:auth-delegator that --authz-mode=tokenreview needs.
//   - service.yaml: Service sandbox-router-svc, port 8080 (the name the
//     clients use); pdb.yaml: minAvailable 1; networkpolicy.yaml: an
//     example that admits the proxy port from every namespace.
//   - v0.5.6 and v1.0.1 put every namespaced object in namespace default
//     and do not label the pods app=sandbox-router; v1.0.3 uses
//     agent-sandbox-system and adds that label, which is what the
//     NetworkPolicy upstream's template controller manages admits
//     (extensions/controllers/sandboxtemplate_controller.go:193-204).
package router

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
)

//go:generate go run ./gen -out .

// Module is upstream's Go module, whose sandbox-router/deploy/ the files
// come from.
const Module = "sigs.k8s.io/agent-sandbox"

// Files are the deploy manifests, in the order upstream's deploy/README.md
// applies them. rbac.yaml and rbac-tokenreview.yaml are optional there
// (the Pod-IP cache, --authz-mode=tokenreview).
var Files = []string{
	"serviceaccount.yaml",
	"rbac.yaml",
	"rbac-tokenreview.yaml",
	"deployment.yaml",
	"service.yaml",
	"pdb.yaml",
	"networkpolicy.yaml",
}

//go:embed v*/*.yaml
var files embed.FS

// Versions lists the releases with a router, oldest first.
func Versions() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.SortFunc(out, compareVersions)
	return out
}

// Has says whether version has a router.
func Has(version string) bool { return slices.Contains(Versions(), version) }

// Read returns one deploy file of one release, e.g. Read("v1.0.3",
// "deployment.yaml").
func Read(version, file string) ([]byte, error) {
	data, err := files.ReadFile(path.Join(version, file))
	if err != nil {
		return nil, fmt.Errorf("agent-sandbox %s has no sandbox-router/deploy/%s", version, file)
	}
	return data, nil
}

// Source names a file as messages cite it.
func Source(version, file string) string {
	return Module + "@" + version + " sandbox-router/deploy/" + file
}

// compareVersions orders "vMAJOR.MINOR.PATCH" strings numerically.
func compareVersions(a, b string) int {
	var x, y [3]int
	_, _ = fmt.Sscanf(a, "v%d.%d.%d", &x[0], &x[1], &x[2])
	_, _ = fmt.Sscanf(b, "v%d.%d.%d", &y[0], &y[1], &y[2])
	return slices.Compare(x[:], y[:])
}

// DefaultVersion is the router release installed when none is named: the
// release of sigs.k8s.io/agent-sandbox the provider is built against
// (go.mod; TestDefaultIsTheModuleGoModPins).
const DefaultVersion = "v1.0.3"
