package exampletest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// servedTypes lists the resource and data source type names the provider
// registers.
func servedTypes(t *testing.T) (resources, dataSources []string) {
	t.Helper()
	ctx := context.Background()
	p := provider.New("test")()
	for _, f := range p.Resources(ctx) {
		var resp resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: provider.TypeName}, &resp)
		resources = append(resources, resp.TypeName)
	}
	for _, f := range p.DataSources(ctx) {
		var resp datasource.MetadataResponse
		f().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: provider.TypeName}, &resp)
		dataSources = append(dataSources, resp.TypeName)
	}
	return resources, dataSources
}

// Every resource and data source has the examples the generated docs show:
// examples/resources/<type>/resource.tf and import.sh,
// examples/data-sources/<type>/data-source.tf. And no example is left for a
// type the provider no longer serves.
func TestEveryTypeHasExamples(t *testing.T) {
	root := repoRoot(t)
	resources, dataSources := servedTypes(t)
	if len(resources) == 0 || len(dataSources) == 0 {
		t.Fatal("the provider serves no resources or no data sources")
	}
	for _, typ := range resources {
		for _, f := range []string{"resource.tf", "import.sh"} {
			if _, err := os.Stat(filepath.Join(root, "examples", "resources", typ, f)); err != nil {
				t.Errorf("resource %s has no examples/resources/%s/%s (the docs show it)", typ, typ, f)
			}
		}
	}
	for _, typ := range dataSources {
		if _, err := os.Stat(filepath.Join(root, "examples", "data-sources", typ, "data-source.tf")); err != nil {
			t.Errorf("data source %s has no examples/data-sources/%s/data-source.tf (the docs show it)", typ, typ)
		}
	}
	for kind, served := range map[string][]string{"resources": resources, "data-sources": dataSources} {
		entries, err := os.ReadDir(filepath.Join(root, "examples", kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !slices.Contains(served, e.Name()) {
				t.Errorf("examples/%s/%s: the provider serves no such type", kind, e.Name())
			}
		}
	}
}

// Every example configuration is applied by TestAccExamples, and every
// module under examples/modules is used by one of them: nothing in
// examples/ can rot unnoticed.
func TestEveryExampleIsApplied(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	docsInputs := []string{"provider", "resources", "data-sources", "modules"}
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(docsInputs, e.Name()) {
			continue
		}
		if !slices.Contains(exampleDirs, e.Name()) {
			t.Errorf("examples/%s is not in exampleDirs, so no test applies it", e.Name())
		}
	}
	modules, err := os.ReadDir(filepath.Join(root, "examples", "modules"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modules {
		used := false
		for _, dir := range exampleDirs {
			files, _ := filepath.Glob(filepath.Join(root, "examples", dir, "*.tf"))
			for _, f := range files {
				data, _ := os.ReadFile(f)
				if strings.Contains(string(data), `source = "../modules/`+m.Name()+`"`) {
					used = true
				}
			}
		}
		if !used {
			t.Errorf("examples/modules/%s is used by no example directory, so no test applies it", m.Name())
		}
	}
}

// The per-resource examples, which only the docs use, still validate against
// the provider's schema (terraform validate, no cluster needed). They are
// snippets: references to objects declared by another snippet are fine, and
// a snippet that needs another provider (not installable offline) is skipped.
func TestPerTypeExamplesValidate(t *testing.T) {
	terraformBin(t)
	root := repoRoot(t)
	rc := cliConfig(t)
	var files []string
	for _, pattern := range []string{"resources/*/resource.tf", "data-sources/*/data-source.tf", "provider/*.tf"} {
		m, err := filepath.Glob(filepath.Join(root, "examples", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join(root, "examples"), f)
		t.Run(rel, func(t *testing.T) {
			dir := t.TempDir()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "example.tf"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			// What every real configuration has: the provider's source.
			if err := os.WriteFile(filepath.Join(dir, "versions.tf"), []byte(`terraform {
  required_providers {
    agentsandbox = { source = "agentsandbox/agentsandbox" }
  }
}
`), 0o600); err != nil {
				t.Fatal(err)
			}
			out, _ := newTFDir(t, dir, rc).run("validate", "-json")
			var res struct {
				Diagnostics []struct {
					Severity string `json:"severity"`
					Summary  string `json:"summary"`
					Detail   string `json:"detail"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &res); err != nil {
				t.Fatalf("terraform validate -json: %v\n%s", err, out)
			}
			for _, d := range res.Diagnostics {
				switch {
				case d.Severity != "error":
				case d.Summary == "Reference to undeclared resource":
					// A snippet may use objects another snippet declares.
				case d.Summary == "Missing required provider" && !strings.Contains(d.Detail, "agentsandbox"):
					t.Skipf("uses another provider, which cannot be installed here: %s", d.Detail)
				default:
					t.Errorf("%s: %s", d.Summary, d.Detail)
				}
			}
		})
	}
}

var hclBlockRE = regexp.MustCompile("(?s)```(?:hcl|terraform)\n(.*?)```")

// The README's quick start is what `make demo` applies: it shows
// examples/quickstart/main.tf verbatim and the commands scripts/demo.sh
// runs.
func TestREADMEQuickStartIsTheDemo(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "## Quick start")
	if start < 0 {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	section := string(readme[start:])
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	main, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range hclBlockRE.FindAllStringSubmatch(section, -1) {
		if m[1] == string(main) {
			found = true
		}
	}
	if !found {
		t.Error("the README's quick start does not show examples/quickstart/main.tf verbatim: copy the file into its terraform block")
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"make demo", "make demo-destroy", "terraform -chdir=.cache/demo/quickstart apply", "terraform -chdir=.cache/demo/quickstart plan -detailed-exitcode", "terraform -chdir=.cache/demo/quickstart destroy"} {
		if !strings.Contains(section, cmd) {
			t.Errorf("the README's quick start does not mention %q", cmd)
		}
	}
	for _, step := range []string{"tf apply -auto-approve", "plan -detailed-exitcode", "tf destroy -auto-approve", "cp examples/quickstart/*.tf"} {
		if !strings.Contains(string(script), step) {
			t.Errorf("scripts/demo.sh no longer runs %q, which the README's quick start lists", step)
		}
	}
}
