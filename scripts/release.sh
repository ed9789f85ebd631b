#!/usr/bin/env bash
# make release-snapshot: the registry release built locally, as the release
# workflow builds it (unsigned unless GPG_FINGERPRINT names a key), then
# checked against the registry's requirements (internal/devenv/release).
# Environment:
#   GORELEASER         goreleaser binary (the GNUmakefile builds it from the Go module proxy)
#   RELEASE_VERSION    the snapshot's version (default: CHANGELOG.md's newest heading)
#   RELEASE_PLATFORMS  comma-separated os_arch list to build only those (default: every platform of .goreleaser.yml)
#   RELEASE_DIST       output directory (default: dist)
#   GPG_FINGERPRINT    sign SHA256SUMS with this key through .goreleaser.yml's signs:
#                      (default: no signature), then verify the signature against the
#                      key's exported public key alone (make release-check does this
#                      with a throwaway key)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GORELEASER:?set GORELEASER to a goreleaser v2 binary (make release-snapshot builds one)}"
: "${RELEASE_VERSION:=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' CHANGELOG.md | head -n1)}"
: "${RELEASE_DIST:=dist}"
export RELEASE_VERSION

mkdir -p .cache/bin .cache/release
go build -o .cache/bin/release ./internal/devenv/release/cmd/release

config=.goreleaser.yml
if [[ -n ${RELEASE_PLATFORMS:-} ]]; then
	config=.cache/release/goreleaser-${RELEASE_PLATFORMS//,/-}.yml
	.cache/bin/release restrict -platforms "$RELEASE_PLATFORMS" -dist "$RELEASE_DIST" -out "$config"
elif [[ $RELEASE_DIST != dist ]]; then
	config=.cache/release/goreleaser-all.yml
	.cache/bin/release restrict -platforms "$(.cache/bin/release platforms | paste -sd,)" -dist "$RELEASE_DIST" -out "$config"
fi
skip=()
if [[ -z ${GPG_FINGERPRINT:-} ]]; then
	skip=(--skip=sign)
fi
t0=$SECONDS
log=.cache/release/goreleaser.log
if ! "$GORELEASER" release --snapshot --clean --config "$config" "${skip[@]}" >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "goreleaser failed; full log: $log" >&2
	exit 1
fi
# The registry manifest is a release asset (release.extra_files), which a
# snapshot does not publish; SHA256SUMS already lists it (checksum.extra_files).
# Put it beside the zips, as the release page holds it.
cp terraform-registry-manifest.json "$RELEASE_DIST/terraform-provider-agentsandbox_${RELEASE_VERSION}_manifest.json"
echo "goreleaser built $RELEASE_DIST in $((SECONDS - t0)) s (log: $log)"
verify=()
if [[ -n ${GPG_FINGERPRINT:-} ]]; then
	# The registry verifies with the public key a namespace registered, and
	# nothing else: so does the check.
	gpg --batch --armor --export "$GPG_FINGERPRINT" >.cache/release/signing-key.asc
	verify=(-public-key .cache/release/signing-key.asc)
fi
.cache/bin/release check -dist "$RELEASE_DIST" ${RELEASE_PLATFORMS:+-platforms "$RELEASE_PLATFORMS"} "${verify[@]}"
