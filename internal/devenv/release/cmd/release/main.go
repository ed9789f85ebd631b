// Command release checks the provider's release artifacts and makes a local
// provider mirror of them (see package release and the GNUmakefile's
// release-* targets).
//
//	release platforms [-config .goreleaser.yml]
//	release restrict -platforms linux_amd64 [-config .goreleaser.yml] [-dist DIR] -out FILE
//	release check [-dist dist] [-config .goreleaser.yml] [-manifest terraform-registry-manifest.json] [-platforms a,b] [-public-key KEY.asc] [-only]
//	release mirror [-dist dist] -dir DIR [-cli-config FILE]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/release"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: release platforms|restrict|check|mirror [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dist := fs.String("dist", "dist", "goreleaser's output directory")
	config := fs.String("config", ".goreleaser.yml", "the goreleaser configuration")
	manifest := fs.String("manifest", "terraform-registry-manifest.json", "the registry manifest the release must ship")
	platforms := fs.String("platforms", "", "comma-separated os_arch list (check: default every platform of -config)")
	out := fs.String("out", "", "restrict: where to write the restricted configuration")
	dir := fs.String("dir", "", "mirror: the mirror's directory")
	cliConfig := fs.String("cli-config", "", "mirror: also write a CLI configuration installing from the mirror here")
	publicKey := fs.String("public-key", "", "check: require SHA256SUMS.sig and verify it with gpg against this ASCII-armored public key alone")
	only := fs.Bool("only", false, "check: -dist holds nothing but the registry's files (a release's downloaded assets), not goreleaser's other output")
	_ = fs.Parse(os.Args[2:])
	if err := run(os.Args[1], *dist, *config, *manifest, *platforms, *out, *dir, *cliConfig, *publicKey, *only); err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(cmd, dist, config, manifest, platforms, out, dir, cliConfig, publicKey string, only bool) error {
	var list []string
	if platforms != "" {
		list = strings.Split(platforms, ",")
	}
	switch cmd {
	case "platforms":
		cfg, err := os.ReadFile(config)
		if err != nil {
			return err
		}
		all, err := release.Platforms(cfg)
		if err != nil {
			return err
		}
		fmt.Println(strings.Join(all, "\n"))
	case "restrict":
		cfg, err := os.ReadFile(config)
		if err != nil {
			return err
		}
		restricted, err := release.RestrictPlatforms(cfg, list, dist)
		if err != nil {
			return err
		}
		return os.WriteFile(out, restricted, 0o644)
	case "check":
		// The configuration first: a release made by a wrong one can look
		// right in dist/ (an unsigned snapshot, say) and still be refused.
		cfg, err := os.ReadFile(config)
		if err != nil {
			return err
		}
		var problems []string
		if err := release.CheckConfig(cfg); err != nil {
			problems = append(problems, fmt.Sprintf("%s:\n%v", config, err))
		}
		if list == nil {
			if list, err = release.Platforms(cfg); err != nil {
				return err
			}
		}
		m, err := os.ReadFile(manifest)
		if err != nil {
			return err
		}
		a, err := release.Check(dist, m, list)
		if err != nil {
			if a == nil {
				return err
			}
			problems = append(problems, err.Error())
		}
		if only {
			extra, err := release.Extra(a)
			if err != nil {
				return err
			}
			for _, f := range extra {
				problems = append(problems, f+": a release asset the registry does not read")
			}
		}
		sig := "signed (" + release.Prefix + "_" + a.Version + "_SHA256SUMS.sig, not verified: no -public-key)"
		switch {
		case publicKey != "":
			key, err := os.ReadFile(publicKey)
			if err != nil {
				return err
			}
			s, err := release.VerifySignature(a, key)
			if err != nil {
				problems = append(problems, "signature: "+err.Error())
				break
			}
			sig = fmt.Sprintf("signed: gpg --verify good against %s alone, %s key %s", publicKey, release.AlgoName(s.Algo), s.Primary)
		case !a.Signed:
			sig = "not signed (no GPG key: a snapshot)"
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s is not what the Terraform registry requires:\n%s", dist, strings.Join(problems, "\n"))
		}
		fmt.Printf("%s: %s %s, %d platforms (%s), SHA256SUMS and manifest (protocol 6.0) correct, %s\n",
			dist, release.Prefix, a.Version, len(a.Zips), strings.Join(a.Platforms(), " "), sig)
	case "mirror":
		if dir == "" {
			return fmt.Errorf("-dir is required")
		}
		m, err := os.ReadFile(manifest)
		if err != nil {
			return err
		}
		a, err := release.Check(dist, m, list)
		if err != nil {
			return fmt.Errorf("%s is not what the Terraform registry requires:\n%w", dist, err)
		}
		dirs, err := release.Mirror(a, dir)
		if err != nil {
			return err
		}
		for _, d := range dirs {
			fmt.Printf("mirrored %s %s (%s) into %s\n", release.Prefix, a.Version, strings.Join(a.Platforms(), " "), d)
		}
		if cliConfig != "" {
			return os.WriteFile(cliConfig, []byte(release.CLIConfig(dir)), 0o644)
		}
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}
