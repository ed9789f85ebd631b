#!/usr/bin/env bash
# Builds the localcluster binary once per source version and prints its path
# as the last line of stdout:
#
#   <repo>/.cache/localcluster/v1.37.2-<hash>/localcluster
#
# <hash> covers everything that goes into the binary (the module's non-test
# Go sources, embedded files, go.mod, go.sum and this script), so an
# unchanged tree reuses the cached binary without invoking the Go toolchain,
# and any change builds a new one next to the old.
#
# Needs only Go (and gcc for cgo, as any default Go build); all modules come
# from the Go module proxy. A cold build takes about 10 minutes on 2 cores
# and ~3 GB of RAM. Environment:
#   LOCALCLUSTER_CACHE_DIR  where binaries are kept (default <repo>/.cache/localcluster)
#   LOCALCLUSTER_BUILD_P    parallel compile jobs (default 2)
#   LOCALCLUSTER_FORCE=1    rebuild even if the binary exists
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../../.." && pwd))"
k8s_version="v1.37.2"

cd "$here"
# Sorted file list + contents; test files and the selftest package do not end up
# in the binary, so editing them must not trigger a 10-minute rebuild.
hash="$(
  find . -type f \( -name '*.go' -o -name '*.yaml' -o -name 'go.mod' -o -name 'go.sum' -o -name 'build.sh' \) \
    ! -name '*_test.go' ! -path './selftest/*' -print0 |
    LC_ALL=C sort -z |
    xargs -0 sha256sum |
    sha256sum | cut -c1-12
)"

cache="${LOCALCLUSTER_CACHE_DIR:-$repo/.cache/localcluster}"
out_dir="$cache/$k8s_version-$hash"
bin="$out_dir/localcluster"

if [[ -x "$bin" && "${LOCALCLUSTER_FORCE:-0}" != 1 ]]; then
  echo "localcluster: using cached $bin" >&2
  echo "$bin"
  exit 0
fi

# One build at a time per cache: concurrent callers (parallel test packages,
# several shells) would otherwise compile the same ~2,000 Kubernetes packages
# side by side. A waiter finds the binary the first one built.
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9
if [[ -x "$bin" && "${LOCALCLUSTER_FORCE:-0}" != 1 ]]; then
  echo "localcluster: using cached $bin (built while waiting)" >&2
  echo "$bin"
  exit 0
fi

mkdir -p "$out_dir"
pkg_version="k8s.io/component-base/version"
cli_version="k8s.io/client-go/pkg/version"
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
ldflags="-s -w"
# Without these the apiserver reports v0.0.0 and clients warn about skew.
for p in "$pkg_version" "$cli_version"; do
  ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=37"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=$build_date"
done

echo "localcluster: building $bin (cold builds take ~10 min on 2 cores)" >&2
start=$(date +%s)
tmp="$(mktemp "$out_dir/.localcluster.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
go build -p "${LOCALCLUSTER_BUILD_P:-2}" -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp" ./cmd/localcluster
chmod 0755 "$tmp"
# Atomic rename: concurrent builds of the same version never expose a
# half-written binary.
mv -f "$tmp" "$bin"
trap - EXIT
echo "localcluster: built in $(( $(date +%s) - start ))s" >&2
echo "$bin"
