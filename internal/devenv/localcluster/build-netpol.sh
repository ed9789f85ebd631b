#!/usr/bin/env bash
# Builds the real node's NetworkPolicy enforcer, sigs.k8s.io/kube-network-
# policies, unmodified, from the version pinned in netpol/go.mod (Go module
# proxy), and prints as its last stdout line the path of the binary:
#
#   <repo>/.cache/localcluster/netpol-<version>-<hash>/kube-network-policies
#
# It has a module of its own: inside the localcluster module it does not
# build (its containerd/nri v0.9.0 needs an older runtime-spec than
# Kubernetes 1.37). It enforces only where the kernel has nft_queue
# (CONFIG_NFT_QUEUE): its rules use nftables' queue statement, and a kernel
# without it refuses them, so nothing is enforced (these machines' kernel is
# such a one; localcluster and the end-to-end test say so).
# Cold: ~1.5 min on 2 cores; cached by the hash of netpol/go.mod, netpol/go.sum
# and this script. Environment: LOCALCLUSTER_CACHE_DIR, LOCALCLUSTER_BUILD_P,
# LOCALCLUSTER_FORCE=1 (as build.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../../.." && pwd))"
cd "$here/netpol"
version="$(awk '$1 == "sigs.k8s.io/kube-network-policies" {print $2}' go.mod)"
hash="$(cat go.mod go.sum "$here/build-netpol.sh" | sha256sum | cut -c1-12)"
cache="${LOCALCLUSTER_CACHE_DIR:-$repo/.cache/localcluster}"
out="$cache/netpol-$version-$hash"
bin="$out/kube-network-policies"

if [[ -x $bin && ${LOCALCLUSTER_FORCE:-0} != 1 ]]; then
  echo "build-netpol: using cached $bin" >&2
  echo "$bin"
  exit 0
fi
mkdir -p "$out"
tmp="$(mktemp "$out/.kube-network-policies.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
echo "build-netpol: building kube-network-policies $version into $out (cold: ~1.5 min)" >&2
start=$(date +%s)
CGO_ENABLED=0 go build -p "${LOCALCLUSTER_BUILD_P:-2}" -trimpath -buildvcs=false -ldflags "-s -w" \
  -o "$tmp" sigs.k8s.io/kube-network-policies/cmd
chmod 0755 "$tmp"
mv -f "$tmp" "$bin"
trap - EXIT
echo "build-netpol: built in $(( $(date +%s) - start ))s" >&2
echo "$bin"
