#!/usr/bin/env bash
# Builds the Terraform and OpenTofu CLIs of the version matrix from the Go
# module proxy (nothing else is downloaded) and caches them under
# .cache/tfcli/<name>-<version>-<hash of this script>/. Prints one line per
# CLI: "<label> <path>", the label being terraform-1.5.7, tofu-1.12.6, ...
# Terraform on PATH (1.11.4 on the project's machines) is listed too, as
# "terraform-<its version>", so callers get the whole matrix from one place.
#
#   tools/tfcli/build.sh            the whole matrix
#   tools/tfcli/build.sh terraform@v1.5.7 opentofu@v1.12.6
#
# How each is built, and why:
#   - the module's source comes from `go mod download` (the module proxy);
#     it is copied to a writable directory and built there as the main
#     module, so its own go.mod and go.sum apply (OpenTofu's go.mod replaces
#     hashicorp/hcl/v2 with its fork; `go install pkg@version` refuses
#     modules with replace directives);
#   - Terraform 1.9 and later keep nine remote-state backends (azurerm,
#     consul, cos, gcs, kubernetes, oci, oss, pg, s3) and internal/legacy in
#     nested modules that the module zip leaves out and the proxy does not
#     serve. They are replaced by stand-ins that refuse to be configured
#     ("not in this build"); the local backend, the only one the tests use,
#     is Terraform's own. Everything else is the release's source unchanged.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
SELF_HASH=$(sha256sum tools/tfcli/build.sh | cut -c1-12)
CACHE=$ROOT/.cache/tfcli
export GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# The matrix: the last MPL Terraform, the newest Terraform the proxy serves,
# the newest OpenTofu. Keep README and docs/guides/opentofu.md in step.
DEFAULT=(terraform@v1.5.7 terraform@v1.13.3 opentofu@v1.12.6)

log() { printf '%s\n' "$*" >&2; }

backends=(azure consul cos gcs kubernetes oci oss pg s3)

# stub_backends writes the stand-ins for Terraform's nested backend modules
# into the source tree at $1 (only those its go.mod replaces with a missing
# local directory).
stub_backends() {
	local src=$1 b dir
	for b in "${backends[@]}"; do
		dir=$src/internal/backend/remote-state/$b
		grep -q "=> ./internal/backend/remote-state/$b\$" "$src/go.mod" || continue
		[[ -e $dir/go.mod ]] && continue
		mkdir -p "$dir"
		printf 'module github.com/hashicorp/terraform/internal/backend/remote-state/%s\n\ngo 1.21\n' "$b" >"$dir/go.mod"
		cat >"$dir/stub.go" <<-GO
			// Package $b stands in for Terraform's $b backend, whose nested module the
			// Go module proxy does not serve (see tools/tfcli/build.sh).
			package $b

			import (
				"fmt"

				"github.com/hashicorp/terraform/internal/backend"
				"github.com/hashicorp/terraform/internal/configs/configschema"
				"github.com/hashicorp/terraform/internal/states/statemgr"
				"github.com/hashicorp/terraform/internal/tfdiags"
				"github.com/zclconf/go-cty/cty"
			)

			type unavailable struct{}

			// New returns a backend that refuses to be configured.
			func New() backend.Backend { return unavailable{} }

			var errUnavailable = fmt.Errorf("the $b backend is not in this build of Terraform (tools/tfcli/build.sh: its nested module is not on the Go module proxy)")

			func (unavailable) ConfigSchema() *configschema.Block { return &configschema.Block{} }
			func (unavailable) PrepareConfig(v cty.Value) (cty.Value, tfdiags.Diagnostics) {
				var d tfdiags.Diagnostics
				return v, d.Append(errUnavailable)
			}
			func (unavailable) Configure(cty.Value) tfdiags.Diagnostics {
				var d tfdiags.Diagnostics
				return d.Append(errUnavailable)
			}
			func (unavailable) StateMgr(string) (statemgr.Full, error) { return nil, errUnavailable }
			func (unavailable) DeleteWorkspace(string, bool) error    { return errUnavailable }
			func (unavailable) Workspaces() ([]string, error)         { return nil, errUnavailable }
		GO
	done
	if grep -q '=> ./internal/legacy$' "$src/go.mod" && [[ ! -e $src/internal/legacy/go.mod ]]; then
		# Only the nested backends import it; nothing in this build does.
		mkdir -p "$src/internal/legacy"
		printf 'module github.com/hashicorp/terraform/internal/legacy\n\ngo 1.21\n' >"$src/internal/legacy/go.mod"
	fi
}

# build NAME@VERSION: prints "<label> <path>".
build() {
	local name=${1%@*} version=${1#*@} module cmd bin label
	case $name in
	terraform) module=github.com/hashicorp/terraform cmd=. bin=terraform label=Terraform ;;
	opentofu) module=github.com/opentofu/opentofu cmd=./cmd/tofu bin=tofu label=OpenTofu ;;
	*)
		log "unknown CLI $name (terraform or opentofu)"
		return 2
		;;
	esac
	local out=$CACHE/$bin-${version#v}-$SELF_HASH
	if [[ ! -x $out/$bin ]]; then
		local t0=$SECONDS dir
		log "building $bin ${version} from the Go module proxy into $out"
		dir=$($GO mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
		[[ -n $dir ]] || {
			log "go mod download $module@$version gave no directory"
			return 1
		}
		local src=$CACHE/src/$bin-${version#v}
		rm -rf "$src" "$out.tmp"
		mkdir -p "$CACHE/src" "$out.tmp"
		cp -r "$dir" "$src"
		chmod -R u+w "$src"
		[[ $name == terraform ]] && stub_backends "$src"
		# version.dev=no, as the release builds set it: without it the CLI
		# calls itself <version>-dev, a pre-release that satisfies no
		# required_version constraint (Terraform 1.5 has no such variable).
		(cd "$src" && $GO build -trimpath -ldflags "-s -w -X $module/version.dev=no" -o "$out.tmp/$bin" "$cmd")
		# The whole output is read (head would end the CLI with SIGPIPE, which
		# pipefail turns into a failed build), without the caller's CLI
		# configuration (a missing one prints a warning first).
		local got
		got=$(env -u TF_CLI_CONFIG_FILE -u TOFU_CLI_CONFIG_FILE "$out.tmp/$bin" version 2>/dev/null || true)
		got=$(grep -m1 -E "^$label v" <<<"$got" || true)
		if [[ $got != "$label $version" ]]; then
			log "built $bin reports \"$got\", want \"$label $version\""
			return 1
		fi
		rm -rf "$out" "$src"
		mv "$out.tmp" "$out"
		log "built $bin $version in $((SECONDS - t0)) s"
	fi
	echo "$bin-${version#v} $out/$bin"
}

specs=("$@")
[[ ${#specs[@]} -gt 0 ]] || specs=("${DEFAULT[@]}")
for s in "${specs[@]}"; do
	build "$s"
done
if [[ $# -eq 0 ]] && command -v terraform >/dev/null; then
	v=$(terraform version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p')
	echo "terraform-$v $(command -v terraform)"
fi
