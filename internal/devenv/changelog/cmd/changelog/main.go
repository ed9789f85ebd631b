// Command changelog checks CHANGELOG.md's convention (package changelog).
//
//	changelog check [-base REF]            a user-visible change adds an entry (make changelog-check, CI)
//	changelog release -tag vX.Y.Z [-notes FILE]  the tag is the newest, dated section; its entries go to FILE (the release workflow)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/changelog"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: changelog check [-base REF] | release -tag vX.Y.Z [-notes FILE]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	base := fs.String("base", os.Getenv("CHANGELOG_BASE"), "check: compare HEAD with its merge base with this ref (default: the pull request's base branch on GitHub Actions, else origin/main, else main)")
	tag := fs.String("tag", "", "release: the tag being released")
	notes := fs.String("notes", "", "release: write the section's entries (the release notes) here")
	_ = fs.Parse(os.Args[2:])
	if err := run(os.Args[1], *base, *tag, *notes); err != nil {
		fmt.Fprintf(os.Stderr, "changelog %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(cmd, base, tag, notes string) error {
	switch cmd {
	case "check":
		ref, err := changelog.BaseRef(".", base)
		if err != nil {
			return err
		}
		r, err := changelog.Check(".", ref)
		if err != nil {
			return err
		}
		fmt.Println("changelog:", r.Message)
	case "release":
		text, err := os.ReadFile(changelog.File)
		if err != nil {
			return err
		}
		n, err := changelog.Release(string(text), tag)
		if err != nil {
			return err
		}
		if notes != "" {
			if err := os.WriteFile(notes, []byte(n), 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("changelog: %s is %s's newest section, dated; release notes: %d bytes\n", tag, changelog.File, len(n))
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}
