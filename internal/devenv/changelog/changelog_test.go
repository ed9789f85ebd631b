package changelog

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const unreleased = `## 0.2.0 (Unreleased)

FEATURES:

* resource/agentsandbox_sandbox: something new.

## 0.1.0 (June 1, 2027)

BUG FIXES:

* provider: an old fix,
  continued on a second line.
`

// repo is a throwaway git repository whose main branch holds a changelog.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T, changelog string) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write(File, changelog)
	r.write("provider/provider.go", "package provider\n")
	r.commit("initial")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
}

// addEntry inserts an entry after the given line of the changelog.
func (r *repo) addEntry(after, entry string) {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, File))
	if err != nil {
		r.t.Fatal(err)
	}
	if !strings.Contains(string(b), after+"\n") {
		r.t.Fatalf("changelog has no line %q", after)
	}
	r.write(File, strings.Replace(string(b), after+"\n", after+"\n\n"+entry+"\n", 1))
}

// A change is judged from its merge base with the base branch: a
// user-visible change needs an entry in the newest, unreleased section (or
// a "Changelog: none" line in a commit); anything else passes.
func TestCheck(t *testing.T) {
	cases := map[string]struct {
		changelog string
		change    func(r *repo)
		want      string // "" passes; else a word of the error
		message   string // a word of the passing message
	}{
		"provider change with an entry": {change: func(r *repo) {
			r.write("internal/resources/sandbox/resource.go", "package sandbox\n")
			r.addEntry("FEATURES:", "* resource/agentsandbox_sandbox: `x` is new.")
			r.commit("sandbox: x")
		}, message: "adds 1 entries to 0.2.0"},
		"provider change, entry in a later commit of the branch": {change: func(r *repo) {
			r.write("provider/provider.go", "package provider // changed\n")
			r.commit("provider: change")
			r.addEntry("FEATURES:", "* provider: the change.")
			r.commit("changelog")
		}, message: "adds 1 entries"},
		"provider change without an entry": {change: func(r *repo) {
			r.write("provider/provider.go", "package provider // changed\n")
			r.commit("provider: change")
		}, want: "adds no entry:\n  provider/provider.go"},
		"entry under the released section": {change: func(r *repo) {
			r.write("main.go", "package main\n")
			r.addEntry("BUG FIXES:", "* provider: late.")
			r.commit("main")
		}, want: "only outside the newest section"},
		"entry when the newest section is released": {changelog: "## 0.1.0 (June 1, 2027)\n\nFEATURES:\n\n* provider: first.\n", change: func(r *repo) {
			r.write("main.go", "package main\n")
			r.addEntry("FEATURES:", "* provider: next.")
			r.commit("main")
		}, want: "a released version: add a \"## X.Y.Z (Unreleased)\" heading"},
		"opted out": {change: func(r *repo) {
			r.write("templates/guides/x.md.tmpl", "typo fixed\n")
			r.commit("guides: typo\n\nChangelog: none (a typo)")
		}, message: "Changelog: none"},
		"an opt-out in the middle of a sentence does not count": {change: func(r *repo) {
			r.write("examples/quickstart/main.tf", "# x\n")
			r.commit("examples: x; changelog: none")
		}, want: "adds no entry"},
		"tests, CI and tooling only": {change: func(r *repo) {
			r.write("internal/resources/sandbox/resource_test.go", "package sandbox\n")
			r.write("internal/testing/acctest/x.go", "package acctest\n")
			r.write("internal/devenv/release/x.go", "package release\n")
			r.write(".github/workflows/ci.yml", "name: CI\n")
			r.write("scripts/x.sh", "true\n")
			r.write("README.md", "# readme\n")
			r.write("go.sum", "x\n")
			r.commit("tests and tooling")
		}, message: "touches no user-visible file"},
		"a badly formatted changelog fails whatever the change": {changelog: unreleased + "\nsome text\n", change: func(r *repo) {
			r.write("scripts/x.sh", "true\n")
			r.commit("x")
		}, want: "neither a heading"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl := tc.changelog
			if cl == "" {
				cl = unreleased
			}
			r := newRepo(t, cl)
			r.git("checkout", "-q", "-b", "feature")
			tc.change(r)
			res, err := Check(r.dir, "main")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tc.want == "" && !strings.Contains(res.Message, tc.message):
				t.Errorf("Check passed with %q, want it to say %q", res.Message, tc.message)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

// On main's own history (a push to main, a clean clone of main in CI)
// there is no change to judge, whatever main's commits did; with no base
// branch at all only the format is checked.
func TestCheckOnMainAndWithoutBase(t *testing.T) {
	r := newRepo(t, unreleased)
	r.write("provider/provider.go", "package provider // no entry\n")
	r.commit("provider: change without entry, on main")
	res, err := Check(r.dir, "main")
	if err != nil || !strings.Contains(res.Message, "HEAD is on main's history") {
		t.Errorf("on main: %v, %+v", err, res)
	}
	// A clean clone: origin/main is HEAD.
	clone := t.TempDir()
	r.git("clone", "-q", r.dir, clone)
	t.Setenv("GITHUB_BASE_REF", "")
	base, err := BaseRef(clone, "")
	if err != nil || base != "origin/main" {
		t.Fatalf("BaseRef in a clone: %q, %v", base, err)
	}
	if res, err := Check(clone, base); err != nil || !strings.Contains(res.Message, "no change to judge") {
		t.Errorf("clean clone: %v, %+v", err, res)
	}
	// No main at all.
	r.git("branch", "-m", "main", "trunk")
	if base, err := BaseRef(r.dir, ""); err != nil || base != "" {
		t.Errorf("BaseRef without main: %q, %v", base, err)
	}
	if res, err := Check(r.dir, ""); err != nil || !strings.Contains(res.Message, "format checked only") {
		t.Errorf("no base: %v, %+v", err, res)
	}
}

// On a GitHub pull request the base is the PR's base branch, fetched as
// origin/<branch>; if it was not fetched the check fails instead of
// passing without comparing.
func TestBaseRefOnPullRequests(t *testing.T) {
	r := newRepo(t, unreleased)
	t.Setenv("GITHUB_BASE_REF", "release-0.1")
	if _, err := BaseRef(r.dir, ""); err == nil || !strings.Contains(err.Error(), "fetch-depth: 0") {
		t.Errorf("unfetched base: %v", err)
	}
	r.git("update-ref", "refs/remotes/origin/release-0.1", "HEAD")
	if base, err := BaseRef(r.dir, ""); err != nil || base != "origin/release-0.1" {
		t.Errorf("BaseRef: %q, %v", base, err)
	}
	if base, err := BaseRef(r.dir, "v0.1.0"); err != nil || base != "v0.1.0" {
		t.Errorf("explicit base: %q, %v", base, err)
	}
}

func TestVisible(t *testing.T) {
	for path, want := range map[string]bool{
		"main.go":                                    true,
		"provider/provider.go":                       true,
		"internal/resources/sandbox/x.go":            true,
		"internal/clients/kube/apply.go":             true,
		"internal/sandboxapi/releases/x":             true,
		"templates/guides/hardening.md":              true,
		"examples/quickstart/main.tf":                true,
		"terraform-registry-manifest.json":           true,
		".goreleaser.yml":                            true,
		"internal/resources/sandbox/x_test.go":       false,
		"internal/resources/controller/testdata/a.y": false,
		"internal/testing/acctest/acctest.go":        false,
		"internal/devenv/demo/demo.go":               false,
		"docs/resources/sandbox.md":                  false,
		"README.md":                                  false,
		"CHANGELOG.md":                               false,
		"go.mod":                                     false,
		".github/workflows/ci.yml":                   false,
		"scripts/release.sh":                         false,
		"tools/go.mod":                               false,
	} {
		if got := Visible(path); got != want {
			t.Errorf("Visible(%q) = %v, want %v", path, got, want)
		}
	}
}

// The repository's own changelog keeps the format.
func TestRepositoryChangelog(t *testing.T) {
	b, err := os.ReadFile("../../../" + File)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(sections) == 0 {
		t.Fatal("no sections")
	}
}

// A tag is released only from a dated newest section of its own version,
// whose entries are the release notes.
func TestRelease(t *testing.T) {
	dated := strings.Replace(unreleased, "## 0.2.0 (Unreleased)", "## 0.2.0 (July 14, 2027)", 1)
	notes, err := Release(dated, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(notes, "FEATURES:\n\n* resource/agentsandbox_sandbox: something new.") || strings.Contains(notes, "0.1.0") {
		t.Errorf("notes:\n%s", notes)
	}
	for tag, want := range map[string]string{
		"v0.2.0": "still \"(Unreleased)\"",
		"0.2.0":  "not v<semantic version>",
		"v0.3.0": "newest section is 0.2.0",
		"v0.2":   "not v<semantic version>",
	} {
		if _, err := Release(unreleased, tag); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Release(%s): %v, want an error containing %q", tag, err, want)
		}
	}
	if _, err := Release("## 0.2.0 (July 14, 2027)\n\nFEATURES:\n", "v0.2.0"); err == nil || !strings.Contains(err.Error(), "no entries") {
		t.Errorf("empty section: %v", err)
	}
}

func TestParseRefusesBadHeadings(t *testing.T) {
	for _, cl := range []string{
		"## v0.2.0 (Unreleased)\n",
		"## 0.2.0\n",
		"## 0.2.0 (2027-07-14)\n",
		"## 0.2.0 (Unreleased)\n\nFIXES:\n",
		"## 0.2.0 (Unreleased)\n\n* no scope here\n",
		"## 0.2.0 (July 14, 2027)\n\n## 0.1.0 (Unreleased)\n",
	} {
		if _, err := Parse(cl); err == nil {
			t.Errorf("Parse accepted:\n%s", cl)
		}
	}
}
