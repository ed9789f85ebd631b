package main

import (
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/modsource"
)

// modulePath is upstream's Go module. Its zip holds the release manifests'
// sources under k8s/ (CRDs, controller.yaml, rbac.generated.yaml,
// extensions*.yaml and, from v0.5.2, kustomization.yaml).
const modulePath = "sigs.k8s.io/agent-sandbox"

// Asset file names, as upstream's release tool writes them. (Package bundles
// exports the same names; this command cannot import it, since bundles embeds
// what it writes.)
const (
	assetManifest   = "manifest.yaml"                // core, up to v0.5.1
	assetSandbox    = "sandbox.yaml"                 // core, from v0.5.2
	assetExtensions = "extensions.yaml"              // extensions, every release
	assetAll        = "sandbox-with-extensions.yaml" // all-in-one, from v0.5.2
)

// tool is the revision of upstream's release tool, dev/tools/release, that
// published a release. The tool is not in the module zip (dev/tools has its
// own go.mod, so the go command leaves the directory out); it was read in
// upstream's repository at the release tags named below. The module itself
// says that `make release-manifests TAG=...` runs it (Makefile:113-119 at
// v0.5.0, Makefile:191-197 at v1.0.3) and that dev/tools holds the release
// scripts (AGENTS.md:30 at v1.0.3).
type tool int

const (
	// toolFlat is dev/tools/release as tagged v0.5.0 (last changed in
	// 34791703): it writes manifest.yaml and extensions.yaml only
	// (dev/tools/release:43-85 at v0.5.0). The module's README names the
	// same two assets (README.md:96-100 at v0.5.0).
	toolFlat tool = iota
	// toolAllInOne is dev/tools/release from v0.5.2 on (1cb6aa7c, "Add
	// collision-free all-in-one install asset"; the asset logic is the same,
	// line for line, at v0.5.6, and at the newest upstream commit this
	// project could read, 2fd412d5 of 2026-08-22, which is after v0.5.6 and
	// before v1.0.1: the v1.0.x tags were not in that copy, so for v1.0.1
	// and v1.0.3 the same tool is an assumption). It writes sandbox.yaml,
	// extensions.yaml and sandbox-with-extensions.yaml
	// (dev/tools/release:162-248 at v0.5.6); the module's README names the
	// three (README.md:86-111 at v0.5.2, README.md:89-116 at v1.0.3) and
	// its k8s/kustomization.yaml:9-10 says the release tooling renders it
	// into sandbox-with-extensions.yaml with the ko:// image replaced.
	toolAllInOne
)

// release is one upstream release the generator renders.
type release struct {
	// version is the tag: module version, image tag and directory name.
	version string
	// sum is the module zip's hash as go.sum records it. The generator
	// refuses a module whose hash differs, so the committed bundles can only
	// be regenerated from these exact bytes.
	sum string
	// tool is the release tool revision that published the release.
	tool tool
}

// releases lists every release the Go module proxy serves from v0.5.0 on
// (checked 2026-12-04: v0.5.1, v0.5.4, v1.0.0 and v1.0.2 are not served, so
// they have no bundle; nothing the project cannot read is rendered).
var releases = []release{
	{version: "v0.5.0", sum: "h1:RDro6If6nsoFJL/M6lAfGi06SvwTlcBORLNaVjVV6G0=", tool: toolFlat},
	{version: "v0.5.2", sum: "h1:ghR6uyWAfC6fI1rZZPse6Y4phr6Sfx7ywzv9LAWQC54=", tool: toolAllInOne},
	{version: "v0.5.3", sum: "h1:v3G2V0MwN0h+S973PV9swg2l8vIfW7eEGVPziWymTUc=", tool: toolAllInOne},
	{version: "v0.5.5", sum: "h1:tQNxgENgssXUDdUM3gLdAv3tfDK+k/Qe1tpkg5uPTSw=", tool: toolAllInOne},
	{version: "v0.5.6", sum: "h1:+lIxbO5MIPYqmnbv4eWZDm+bh9Y6qHvZ+qXEe4MJVkU=", tool: toolAllInOne},
	{version: "v1.0.1", sum: "h1:AZA1kFurdKIdNL04j9RhGZXb3kL2/O80eiXaTC/oXjM=", tool: toolAllInOne},
	{version: "v1.0.3", sum: "h1:ZiR6xDrXTi1ItyvyDjLvM8lIety/3QVVJ5C98sjzV2Q=", tool: toolAllInOne},
}

// image is the controller image the release tool substitutes for the ko://
// placeholder (dev/tools/release:44 at v0.5.0, :167 at v0.5.6).
func (r release) image() string {
	return "registry.k8s.io/agent-sandbox/agent-sandbox-controller:" + r.version
}

// moduleDirs downloads (or finds in the module cache) every release's
// module, each checked against its pinned hash (package modsource), and
// returns the directories by version.
func moduleDirs(rs []release) (map[string]string, error) {
	versions := make([]modsource.Version, 0, len(rs))
	for _, r := range rs {
		versions = append(versions, modsource.Version{Version: r.version, Sum: r.sum})
	}
	return modsource.Dirs(modulePath, versions)
}
