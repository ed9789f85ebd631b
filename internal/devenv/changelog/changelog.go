// Package changelog keeps CHANGELOG.md's convention (see CONTRIBUTING.md):
//
//	## X.Y.Z (Unreleased)          the next release; "## X.Y.Z (Month D, YYYY)" once tagged
//
//	BREAKING CHANGES: / NOTES: / SECURITY: / FEATURES: / IMPROVEMENTS: / BUG FIXES:
//
//	* <scope>: what changed, for a user (resource/agentsandbox_x, data-source/…, provider, guides, …)
//
// Check enforces it on a change: a user-visible change (what ships in the
// provider binary or in the registry's docs and examples) adds an entry to
// the newest, unreleased section, unless one of its commits says
// "Changelog: none" in a line of its own. The change is the commits between
// HEAD and its merge base with the base branch, so a branch or pull request
// is judged as a whole and main's own history (HEAD on the base branch) has
// nothing to judge. Release checks a tag against the newest heading and
// returns that section as the release notes.
package changelog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// File is the changelog's path in the repository.
const File = "CHANGELOG.md"

var (
	headingRE = regexp.MustCompile(`^## (\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?) \((Unreleased|(?:January|February|March|April|May|June|July|August|September|October|November|December) [1-9][0-9]?, [0-9]{4})\)$`)
	entryRE   = regexp.MustCompile(`^\* \S[^:]*: \S`)
	optOutRE  = regexp.MustCompile(`(?im)^changelog:[ \t]*none\b`)
	hunkRE    = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`)
)

// Categories are the section headings an entry may sit under, in the
// order a section lists them (HashiCorp providers' convention).
var Categories = []string{"BREAKING CHANGES:", "NOTES:", "SECURITY:", "FEATURES:", "IMPROVEMENTS:", "BUG FIXES:"}

// Visible reports whether changing path changes what the provider's users
// get: the provider binary (main.go, provider/, internal/ but the test and
// local-development tooling, go.mod's module set aside), what the release
// ships (the registry manifest, the goreleaser configuration) and what the
// registry shows (templates/ and examples/, from which docs/ is generated).
// Tests, CI, scripts, tools, README and contributor documents are not.
func Visible(path string) bool {
	if strings.HasSuffix(path, "_test.go") || strings.Contains(path, "/testdata/") {
		return false
	}
	switch {
	case path == "main.go", path == "terraform-registry-manifest.json", path == ".goreleaser.yml":
		return true
	case strings.HasPrefix(path, "provider/"), strings.HasPrefix(path, "templates/"), strings.HasPrefix(path, "examples/"):
		return true
	case strings.HasPrefix(path, "internal/testing/"), strings.HasPrefix(path, "internal/devenv/"):
		return false
	case strings.HasPrefix(path, "internal/"):
		return true
	}
	return false
}

// Section is one release's part of the changelog.
type Section struct {
	Version  string
	Released bool // dated, not "(Unreleased)"
	// First and End are 1-based line numbers: the heading, and the line
	// after the section's last.
	First, End int
	Text       string
}

// Parse checks the changelog's format and returns its sections, newest
// first. Every problem is reported, one per line, with its line number.
func Parse(text string) ([]Section, error) {
	var sections []Section
	var problems []string
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i, l := range lines {
		n := i + 1
		switch {
		case strings.HasPrefix(l, "## "):
			m := headingRE.FindStringSubmatch(l)
			if m == nil {
				problems = append(problems, fmt.Sprintf("%s:%d: heading %q is not \"## X.Y.Z (Unreleased)\" or \"## X.Y.Z (Month D, YYYY)\"", File, n, l))
				continue
			}
			if len(sections) > 0 {
				sections[len(sections)-1].End = n
			}
			sections = append(sections, Section{Version: m[1], Released: m[2] != "Unreleased", First: n})
		case l == "", strings.HasPrefix(l, "  "), strings.HasPrefix(l, "# "):
			// blank, an entry's continuation, the file's title
		case strings.HasPrefix(l, "* "):
			if !entryRE.MatchString(l) {
				problems = append(problems, fmt.Sprintf("%s:%d: entry does not start with \"* <scope>: \": %.60q", File, n, l))
			}
			if len(sections) == 0 {
				problems = append(problems, fmt.Sprintf("%s:%d: entry before the first \"## X.Y.Z\" heading", File, n))
			}
		case strings.HasSuffix(l, ":") && strings.ToUpper(l) == l:
			if !slices.Contains(Categories, l) {
				problems = append(problems, fmt.Sprintf("%s:%d: category %q is not one of %s", File, n, l, strings.Join(Categories, " ")))
			}
		default:
			problems = append(problems, fmt.Sprintf("%s:%d: neither a heading, a category, an entry (\"* <scope>: ...\") nor its indented continuation: %.60q", File, n, l))
		}
	}
	if len(sections) == 0 {
		problems = append(problems, File+": no \"## X.Y.Z (Unreleased)\" heading")
	} else {
		sections[len(sections)-1].End = len(lines) + 1
	}
	for i := range sections {
		s := &sections[i]
		s.Text = strings.Join(lines[s.First-1:s.End-1], "\n")
		if i > 0 && !s.Released {
			problems = append(problems, fmt.Sprintf("%s:%d: %s is unreleased but not the newest section", File, s.First, s.Version))
		}
	}
	if len(problems) > 0 {
		return sections, errors.New(strings.Join(problems, "\n"))
	}
	return sections, nil
}

// Result is what Check found.
type Result struct {
	Base    string   // the ref compared against ("" when there is none)
	Visible []string // user-visible files the change touches
	Message string   // why it passed
}

// Check judges the change from HEAD's merge base with base (see BaseRef)
// in the git repository dir. base "" means there is nothing to compare
// against: the format alone is checked.
func Check(dir, base string) (*Result, error) {
	head, err := git(dir, "show", "HEAD:"+File)
	if err != nil {
		return nil, err
	}
	sections, err := Parse(head)
	if err != nil {
		return nil, err
	}
	r := &Result{Base: base}
	if base == "" {
		r.Message = "no base branch to compare against (no origin/main or main): format checked only"
		return r, nil
	}
	mb, err := git(dir, "merge-base", base, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("no merge base of %s and HEAD (a shallow clone? fetch with full history): %w", base, err)
	}
	mb = strings.TrimSpace(mb)
	headRev, err := git(dir, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	if mb == strings.TrimSpace(headRev) {
		r.Message = "HEAD is on " + base + "'s history: no change to judge"
		return r, nil
	}
	names, err := git(dir, "diff", "--no-renames", "--name-only", mb, "HEAD")
	if err != nil {
		return nil, err
	}
	for _, f := range strings.Fields(names) {
		if Visible(f) {
			r.Visible = append(r.Visible, f)
		}
	}
	rng := mb[:12] + "..HEAD"
	if len(r.Visible) == 0 {
		r.Message = fmt.Sprintf("%s touches no user-visible file: no entry needed", rng)
		return r, nil
	}
	added, err := addedLines(dir, mb)
	if err != nil {
		return nil, err
	}
	newest := sections[0]
	var inNewest, elsewhere []int
	for n, text := range added {
		if !strings.HasPrefix(text, "* ") {
			continue
		}
		if n >= newest.First && n < newest.End {
			inNewest = append(inNewest, n)
		} else {
			elsewhere = append(elsewhere, n)
		}
	}
	if len(inNewest) > 0 {
		if newest.Released {
			return r, fmt.Errorf("%s: entries were added under %s, a released version: add a \"## X.Y.Z (Unreleased)\" heading above it for the next release", File, newest.Version)
		}
		r.Message = fmt.Sprintf("%s changes %d user-visible files and adds %d entries to %s (Unreleased)", rng, len(r.Visible), len(inNewest), newest.Version)
		return r, nil
	}
	log, err := git(dir, "log", "--format=%B", mb+"..HEAD")
	if err != nil {
		return nil, err
	}
	if optOutRE.MatchString(log) {
		r.Message = fmt.Sprintf("%s changes %d user-visible files; a commit says \"Changelog: none\"", rng, len(r.Visible))
		return r, nil
	}
	why := "adds no entry"
	if len(elsewhere) > 0 {
		why = fmt.Sprintf("adds entries only outside the newest section (line %d), not under %s", elsewhere[0], newest.Version)
	}
	return r, fmt.Errorf("%s changes user-visible files but %s %s:\n  %s\n"+
		"Add a \"* <scope>: ...\" entry under \"## %s (Unreleased)\" in %s (see CONTRIBUTING.md), or, for a change users cannot notice, "+
		"put a line \"Changelog: none\" in a commit message saying why",
		rng, File, why, strings.Join(r.Visible, "\n  "), newest.Version, File)
}

// addedLines returns the lines the change adds to the changelog, by their
// line number in HEAD's version.
func addedLines(dir, from string) (map[int]string, error) {
	diff, err := git(dir, "diff", "--no-renames", "-U0", from, "HEAD", "--", File)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	n := 0
	for _, l := range strings.Split(diff, "\n") {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			n, _ = strconv.Atoi(m[1])
			continue
		}
		if n == 0 || strings.HasPrefix(l, "+++") {
			continue
		}
		if strings.HasPrefix(l, "+") {
			out[n] = l[1:]
			n++
		}
	}
	return out, nil
}

// BaseRef picks what a change is compared against: explicit when given
// (-base, CHANGELOG_BASE), the pull request's base branch on GitHub Actions
// (GITHUB_BASE_REF, fetched as origin/<branch>), else origin/main or main,
// else nothing.
func BaseRef(dir, explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if b := os.Getenv("GITHUB_BASE_REF"); b != "" {
		ref := "origin/" + b
		if _, err := git(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
			return "", fmt.Errorf("pull request base %s is not fetched (actions/checkout needs fetch-depth: 0)", ref)
		}
		return ref, nil
	}
	for _, ref := range []string{"origin/main", "main"} {
		if _, err := git(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err == nil {
			return ref, nil
		}
	}
	return "", nil
}

// Release checks that tag (vX.Y.Z) is the changelog's newest section and
// that it is dated (a release commit turns "(Unreleased)" into the date),
// and returns that section, the release's notes.
func Release(text, tag string) (string, error) {
	version, ok := strings.CutPrefix(tag, "v")
	if !ok || !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		return "", fmt.Errorf("tag %q is not v<semantic version> (the registry reads versions from v-prefixed tags)", tag)
	}
	sections, err := Parse(text)
	if err != nil {
		return "", err
	}
	s := sections[0]
	if s.Version != version {
		return "", fmt.Errorf("tag %s, but %s's newest section is %s: the release commit adds the heading \"## %s (Month D, YYYY)\"", tag, File, s.Version, version)
	}
	if !s.Released {
		return "", fmt.Errorf("%s's section %s is still \"(Unreleased)\": the release commit dates it before tagging", File, version)
	}
	notes := strings.TrimSpace(strings.TrimPrefix(s.Text, strings.SplitN(s.Text, "\n", 2)[0]))
	if !strings.Contains(notes, "\n* ") && !strings.HasPrefix(notes, "* ") {
		return "", fmt.Errorf("%s's section %s has no entries", File, version)
	}
	return notes + "\n", nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
