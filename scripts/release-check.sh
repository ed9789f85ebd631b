#!/usr/bin/env bash
# make release-check: the release's signing path, proven on this machine.
#   1. A throwaway RSA signing key (no passphrase) in a temporary GNUPGHOME:
#      the kind of key the registry accepts (RSA or DSA, not gpg's default
#      ed25519).
#   2. make release-snapshot's build (scripts/release.sh) with GPG_FINGERPRINT
#      set, so goreleaser's own signs: block in .goreleaser.yml signs
#      SHA256SUMS exactly as the release workflow does; release.sh then runs
#      `release check`: the goreleaser configuration, zip names, one binary
#      per zip of the right object format and architecture, the manifest's
#      protocol versions, the checksum of every zip and of the manifest, and
#      gpg --verify of SHA256SUMS.sig against the exported public key alone.
#   3. gpg --verify as a maintainer runs it.
#   4. Tampered copies of the release must FAIL the same check: SHA256SUMS
#      altered; an artifact replaced with SHA256SUMS re-hashed to match
#      (every checksum right: only the signature catches it); a signature by
#      another key; and a release signed by a broken signs: block (--armor).
# Environment:
#   GORELEASER         goreleaser binary (the GNUmakefile builds it)
#   RELEASE_PLATFORMS  platforms to build (default linux_amd64,darwin_arm64,windows_amd64:
#                      one of each object format; the release builds every platform)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GORELEASER:?set GORELEASER to a goreleaser v2 binary (make release-check builds one)}"
: "${RELEASE_PLATFORMS:=linux_amd64,darwin_arm64,windows_amd64}"
export RELEASE_PLATFORMS

step() { printf '\n==> %s\n' "$*"; }
t0=$SECONDS
work=$PWD/.cache/release-check
rm -rf "$work"
mkdir -p "$work"
# Short: gpg-agent's socket lives in it.
GNUPGHOME=$(mktemp -d /tmp/release-check-gnupg.XXXXXX)
export GNUPGHOME
cleanup() {
	gpgconf --kill all >/dev/null 2>&1 || true
	rm -rf "$GNUPGHOME"
}
trap cleanup EXIT

step "a throwaway RSA 4096 signing key (no passphrase) in $GNUPGHOME"
gpg --batch --quiet --gen-key <<'EOT'
%no-protection
Key-Type: RSA
Key-Length: 4096
Key-Usage: sign
Name-Real: agentsandbox release-check (throwaway)
Name-Email: release-check@agentsandbox.invalid
Expire-Date: 1d
%commit
EOT
fpr=$(gpg --batch --quiet --with-colons --list-secret-keys release-check@agentsandbox.invalid | awk -F: '$1 == "fpr" {print $10; exit}')
gpg --batch --armor --export "$fpr" >"$work/public-key.asc"
echo "key $fpr ($((SECONDS - t0)) s)"

step "goreleaser snapshot ($RELEASE_PLATFORMS), SHA256SUMS signed by .goreleaser.yml's signs: block, checked as the registry checks it"
dist=$work/dist
GPG_FINGERPRINT=$fpr RELEASE_DIST=$dist scripts/release.sh
version=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' CHANGELOG.md | head -n1)
export RELEASE_VERSION=$version
sums=$dist/terraform-provider-agentsandbox_${version}_SHA256SUMS
manifest=$dist/terraform-provider-agentsandbox_${version}_manifest.json

step "gpg --verify"
gpg --batch --verify "$sums.sig" "$sums"

# refused NAME WANT DIR: `release check` of DIR must fail, saying WANT.
refused() {
	local out
	if out=$(.cache/bin/release check -dist "$3" -platforms "$RELEASE_PLATFORMS" -public-key "$work/public-key.asc" 2>&1); then
		echo "$out" >&2
		echo "release-check: FAIL: $1 passed the check" >&2
		exit 1
	fi
	if ! grep -qF -- "$2" <<<"$out"; then
		echo "$out" >&2
		echo "release-check: FAIL: $1 was refused, but not for \"$2\"" >&2
		exit 1
	fi
	echo "refused as it must ($1):"
	grep -v 'is not what the Terraform registry requires' <<<"$out" | sed 's/^/    /' | head -n 4
}
tampered() {
	local d=$work/tampered-$1
	cp -r "$dist" "$d"
	echo "$d"
}

step "tampered releases must fail the check"
d=$(tampered sums)
f=${d}/$(basename "$sums")
c=$(head -c1 "$f")
if [[ $c == 0 ]]; then c=1; else c=0; fi
sed -i "1s/^./$c/" "$f"
refused "a checksum in SHA256SUMS altered after signing" "BAD signature" "$d"

d=$(tampered artifact)
# The manifest replaced by an equivalent file (same JSON, other bytes) and
# SHA256SUMS re-hashed to match: what an attacker with write access to the
# release page can do without the key. Every checksum is right.
m=${d}/$(basename "$manifest")
tr -d ' ' <"$manifest" >"$m"
h=$(sha256sum "$m" | cut -d' ' -f1)
sed -i "s/^[0-9a-f]\{64\}  $(basename "$manifest")\$/$h  $(basename "$manifest")/" "${d}/$(basename "$sums")"
out=$(.cache/bin/release check -dist "$d" -platforms "$RELEASE_PLATFORMS" -public-key "$work/public-key.asc" 2>&1 || true)
if grep -q 'SHA-256' <<<"$out"; then
	echo "$out" >&2
	echo "release-check: FAIL: the re-hashed copy should have consistent checksums" >&2
	exit 1
fi
refused "an artifact replaced, SHA256SUMS re-hashed to match" "BAD signature" "$d"

d=$(tampered otherkey)
gpg --batch --quiet --gen-key <<'EOT'
%no-protection
Key-Type: RSA
Key-Length: 2048
Key-Usage: sign
Name-Real: not the release key
Name-Email: intruder@agentsandbox.invalid
Expire-Date: 1d
%commit
EOT
rm "${d}/$(basename "$sums").sig"
gpg --batch --local-user intruder@agentsandbox.invalid --output "${d}/$(basename "$sums").sig" --detach-sign "${d}/$(basename "$sums")"
refused "SHA256SUMS signed by another key" "not the given public key" "$d"

step "a broken signs: block (--armor) must fail too: goreleaser signs with it, the check refuses the result"
broken=$work/goreleaser-armor.yml
sed 's/      - "--detach-sign"/      - "--armor"\n      - "--detach-sign"/' .goreleaser.yml >"$broken"
grep -q -- '"--armor"' "$broken"
first=${RELEASE_PLATFORMS%%,*}
.cache/bin/release restrict -config "$broken" -platforms "$first" -dist "$work/dist-armor" -out "$broken"
if ! GPG_FINGERPRINT=$fpr "$GORELEASER" release --snapshot --clean --config "$broken" >"$work/goreleaser-armor.log" 2>&1; then
	tail -n 20 "$work/goreleaser-armor.log" >&2
	echo "release-check: FAIL: goreleaser did not build the --armor release" >&2
	exit 1
fi
cp terraform-registry-manifest.json "$work/dist-armor/terraform-provider-agentsandbox_${version}_manifest.json"
out=$(.cache/bin/release check -dist "$work/dist-armor" -config "$broken" -platforms "$first" -public-key "$work/public-key.asc" 2>&1) && {
	echo "$out" >&2
	echo "release-check: FAIL: a release signed with --armor passed" >&2
	exit 1
}
for want in "ASCII-armored" "--armor: the registry requires a binary signature"; do
	grep -qF -- "$want" <<<"$out" || {
		echo "$out" >&2
		echo "release-check: FAIL: the --armor release was refused, but not for \"$want\"" >&2
		exit 1
	}
done
echo "refused as it must (signs: with --armor):"
grep -v 'is not what the Terraform registry requires' <<<"$out" | sed 's/^/    /'

step "release-check passed in $((SECONDS - t0)) s: signed with $fpr, verified, and every tampering refused"
