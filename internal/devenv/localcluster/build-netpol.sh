#!/usr/bin/env bash
# Builds the real node's NetworkPolicy enforcer, kube-router's network policy
# controller (github.com/cloudnativelabs/kube-router/v2), unmodified, from the
# version pinned in netpol/go.mod (Go module proxy), and prints as its last
# stdout line the path of the binary:
#
#   <repo>/.cache/localcluster/netpol-<version>-<hash>/kube-router
#
# localcluster runs it with routing and the service proxy off
# (--run-firewall=true --run-router=false --run-service-proxy=false) inside
# the real node's network namespace, where it enforces NetworkPolicy with
# iptables and ipsets. It has a module of its own so that its dependency
# graph is its own (it does not have to agree with Kubernetes 1.37's).
# Cold: ~2 min on 2 cores; cached by the hash of netpol/go.mod, netpol/go.sum
# and this script. Environment: LOCALCLUSTER_CACHE_DIR, LOCALCLUSTER_BUILD_P,
# LOCALCLUSTER_FORCE=1 (as build.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../../.." && pwd))"
cd "$here/netpol"
pkg=github.com/cloudnativelabs/kube-router/v2
version="$(awk -v p="$pkg" '{ for (i = 1; i < NF; i++) if ($i == p) { print $(i + 1); exit } }' go.mod)"
hash="$(cat go.mod go.sum "$here/build-netpol.sh" | sha256sum | cut -c1-12)"
cache="${LOCALCLUSTER_CACHE_DIR:-$repo/.cache/localcluster}"
out="$cache/netpol-$version-$hash"
bin="$out/kube-router"

if [[ -x $bin && ${LOCALCLUSTER_FORCE:-0} != 1 ]]; then
  echo "build-netpol: using cached $bin" >&2
  echo "$bin"
  exit 0
fi
mkdir -p "$out"
tmp="$(mktemp "$out/.kube-router.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
echo "build-netpol: building kube-router $version into $out (cold: ~2 min)" >&2
start=$(date +%s)
# The version is kube-router's own way of reporting it (its Makefile sets
# the same variable); nothing else of the build differs from upstream's.
CGO_ENABLED=0 go build -p "${LOCALCLUSTER_BUILD_P:-2}" -trimpath -buildvcs=false \
  -ldflags "-s -w -X $pkg/pkg/version.Version=$version" \
  -o "$tmp" "$pkg/cmd/kube-router"
chmod 0755 "$tmp"
mv -f "$tmp" "$bin"
trap - EXIT
echo "build-netpol: built in $(( $(date +%s) - start ))s" >&2
echo "$bin"
