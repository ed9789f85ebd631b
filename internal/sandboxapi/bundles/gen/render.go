package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// renderAll renders every asset of every release, keyed "<version>/<asset>".
func renderAll() (map[string][]byte, error) {
	dirs, err := moduleDirs(releases)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, r := range releases {
		assets, err := r.render(dirs[r.version])
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w", modulePath, r.version, err)
		}
		for name, data := range assets {
			out[path.Join(r.version, name)] = data
		}
	}
	return out, nil
}

// render produces the release assets from the module in dir, as the
// release's tool did from a checkout of the tag.
//
// The flat assets (dev/tools/release:43-85 at v0.5.0, :162-215 at v0.5.6):
// every k8s/**/*.yaml file except kustomization.yaml, split by whether
// "extensions" occurs in the file's base name (core: controller.yaml,
// crds/agents.x-k8s.io_sandboxes.yaml, rbac.generated.yaml; extensions: the
// three extension CRDs, extensions-rbac.generated.yaml,
// extensions.controller.yaml, extensions.yaml), concatenated in sorted path
// order with "---\n" written after each file, then the ko:// image
// replaced. The tool writes the files' text unchanged, comments, blank
// documents and all, so these assets are the module's bytes apart from the
// image line.
//
// The all-in-one (dev/tools/release:225-248 at v0.5.6): `kubectl kustomize
// k8s` with the same image replacement, after a guard that the
// kustomization lists exactly the flat assets' files except
// extensions.controller.yaml (:111-139).
func (r release) render(dir string) (map[string][]byte, error) {
	files, err := k8sFiles(dir)
	if err != nil {
		return nil, err
	}
	var core, ext []string
	for _, f := range files {
		if strings.Contains(path.Base(f), "extensions") {
			ext = append(ext, f)
		} else {
			core = append(core, f)
		}
	}
	coreData, err := concat(dir, core, r.image())
	if err != nil {
		return nil, err
	}
	extData, err := concat(dir, ext, r.image())
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(filepath.Join(dir, "k8s", "kustomization.yaml"))
	hasKustomization := statErr == nil

	switch r.tool {
	case toolFlat:
		if hasKustomization {
			return nil, fmt.Errorf("has k8s/kustomization.yaml, but its release tool published no all-in-one asset")
		}
		return map[string][]byte{assetManifest: coreData, assetExtensions: extData}, nil
	case toolAllInOne:
		if !hasKustomization {
			return nil, fmt.Errorf("no k8s/kustomization.yaml to render %s from", assetAll)
		}
		if err := checkKustomizationFiles(dir, files); err != nil {
			return nil, err
		}
		all, err := kustomize(dir, r.image())
		if err != nil {
			return nil, err
		}
		return map[string][]byte{assetSandbox: coreData, assetExtensions: extData, assetAll: all}, nil
	}
	return nil, fmt.Errorf("unknown release tool %d", r.tool)
}

// k8sFiles lists what the tool's glob.glob("k8s/**/*.yaml", recursive=True)
// finds (dev/tools/release:43 at v0.5.0, :162-166 at v0.5.6, which also
// drops kustomization.yaml/.yml): slash paths such as "k8s/controller.yaml",
// in the byte order Python's sorted() gives them. Like glob, it skips names
// starting with a dot.
func k8sFiles(dir string) ([]string, error) {
	var out []string
	err := fs.WalkDir(os.DirFS(dir), "k8s", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "k8s" && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".yaml") {
			return nil
		}
		if d.Name() == "kustomization.yaml" || d.Name() == "kustomization.yml" {
			return nil
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// koImage is the tool's placeholder pattern, verbatim
// (dev/tools/release:61 at v0.5.0, :171-175 at v0.5.6). As in Python, "."
// stops at a line end, so the rest of the image line (upstream's
// "# placeholder value" comment) goes with the placeholder.
var koImage = regexp.MustCompile(`ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller.*`)

func replaceImage(text []byte, image string) []byte {
	return koImage.ReplaceAllLiteral(text, []byte(image))
}

// concat writes each file's text followed by "---\n" and replaces the image.
// Python reads the files in text mode, which turns "\r\n" and "\r" into
// "\n"; so does concat (upstream's files have no carriage returns today).
func concat(dir string, files []string, image string) ([]byte, error) {
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		b.WriteString(strings.ReplaceAll(text, "\r", "\n"))
		b.WriteString("---\n")
	}
	return replaceImage([]byte(b.String()), image), nil
}

// checkKustomizationFiles is the tool's drift guard
// (check_install_manifest_drift, dev/tools/release:111-139 at v0.5.6): the
// kustomization's resources must be exactly the files of the flat assets
// minus extensions.controller.yaml, or the all-in-one would not hold what
// the flat assets hold. The tool fails the release in that case; so does
// the generator.
func checkKustomizationFiles(dir string, files []string) error {
	data, err := os.ReadFile(filepath.Join(dir, "k8s", "kustomization.yaml"))
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("k8s/kustomization.yaml: %w", err)
	}
	var want []string
	for _, f := range files {
		rel := strings.TrimPrefix(f, "k8s/")
		if rel != "extensions.controller.yaml" {
			want = append(want, rel)
		}
	}
	listed := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(listed, want) {
		return fmt.Errorf("k8s/kustomization.yaml lists %v, the flat assets hold %v", listed, want)
	}
	return nil
}

// kustomize renders k8s/kustomization.yaml as `kubectl kustomize k8s` does.
//
// kubectl's kustomize command is kustomize's own build command
// (k8s.io/kubectl/pkg/cmd/kustomize/kustomize.go at v0.37.2 calls
// sigs.k8s.io/kustomize/kustomize/v5/commands/build.NewCmdBuild). Without
// flags, that command runs krusty with its default options except the
// reorder option, which becomes "unspecified" when --reorder is not given
// (commands/build/build.go:82-84 and reorderoutput.go:37-41 at v5.8.1);
// krusty then applies kustomize's legacy sort order, as the kustomization
// sets no sortOptions (api/krusty/kustomizer.go:129-162 at v0.21.1). The
// output is ResMap.AsYaml, documents joined by "---\n".
//
// Which kubectl upstream's release runner had is not recorded anywhere the
// project can read; this uses the kustomize of kubectl v1.37 (api and kyaml
// v0.21.1, the versions k8s.io/kubectl v0.37.2 requires, matching this
// module's Kubernetes libraries). Another kustomize release could format
// the same objects differently.
func kustomize(dir, image string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, "k8s"))
	if err != nil {
		return nil, fmt.Errorf("kustomize k8s: %w", err)
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize k8s: %w", err)
	}
	return replaceImage(out, image), nil
}
