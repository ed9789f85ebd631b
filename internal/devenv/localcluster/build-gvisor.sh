#!/usr/bin/env bash
# Builds gVisor's runsc and its containerd shim (containerd-shim-runsc-v1)
# for the real node, from the gVisor module pinned in gvisor/go.mod (Go
# module proxy), and prints as its last stdout line the directory holding
# both:
#
#   <repo>/.cache/localcluster/gvisor-<version>-<hash>/{runsc,containerd-shim-runsc-v1}
#
# Why not Debian's runsc (0.0~20221219): it decides whether it runs in the
# host's network namespace by checking for /proc/sys/net/core/rmem_default,
# which newer kernels (such as these machines' 6.18) have in every
# namespace, so it refuses every pod ("cannot run with network enabled in
# root network namespace"). Debian also ships no containerd shim for it.
#
# One patch (gvisor/patches/, applied to a vendored copy; the module cache
# stays untouched): the shim treats a refused oom_score_adj of -999
# as a warning, as containerd does for itself. Lowering oom_score_adj needs
# CAP_SYS_RESOURCE, which these machines withhold even from root, and the
# unpatched shim then refuses to start any pod.
#
# Static (CGO_ENABLED=0), as upstream releases are: runsc re-executes
# itself inside its chroot, where no dynamic loader exists. Cold: ~2-3 min on
# 2 cores; cached by the hash of gvisor/go.mod, gvisor/go.sum and this script.
# Environment: LOCALCLUSTER_CACHE_DIR, LOCALCLUSTER_BUILD_P, LOCALCLUSTER_FORCE=1 (as build.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../../.." && pwd))"
cd "$here/gvisor"
version="$(awk '$1 == "gvisor.dev/gvisor" {print $2}' go.mod)"
hash="$(cat go.mod go.sum patches/*.patch "$here/build-gvisor.sh" | sha256sum | cut -c1-12)"
cache="${LOCALCLUSTER_CACHE_DIR:-$repo/.cache/localcluster}"
out="$cache/gvisor-${version##*-}-$hash"

if [[ -x $out/runsc && -x $out/containerd-shim-runsc-v1 && ${LOCALCLUSTER_FORCE:-0} != 1 ]]; then
  echo "build-gvisor: using cached $out" >&2
  echo "$out"
  exit 0
fi
mkdir -p "$out"
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "build-gvisor: building runsc and containerd-shim-runsc-v1 ($version) into $out (cold: ~2-3 min)" >&2
start=$(date +%s)
export CGO_ENABLED=0
# A vendored copy of the pinned module in a scratch directory, patched there
# (the module cache stays untouched), built with -mod=vendor.
mkdir -p "$tmp/mod"
cp go.mod go.sum tools.go "$tmp/mod/"
(cd "$tmp/mod" && go mod vendor)
for p in patches/*.patch; do
  rel="$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p" | head -n1)"
  patch --quiet "$tmp/mod/vendor/$rel" "$p"
done
build() { (cd "$tmp/mod" && go build -mod=vendor -p "${LOCALCLUSTER_BUILD_P:-2}" -trimpath -buildvcs=false "$@"); }
build -ldflags "-s -w -X gvisor.dev/gvisor/runsc/version.version=$version" -o "$tmp/runsc" gvisor.dev/gvisor/runsc
build -ldflags "-s -w" -o "$tmp/containerd-shim-runsc-v1" gvisor.dev/gvisor/shim
mv -f "$tmp/runsc" "$tmp/containerd-shim-runsc-v1" "$out/"
echo "build-gvisor: built in $(( $(date +%s) - start ))s" >&2
echo "$out"
