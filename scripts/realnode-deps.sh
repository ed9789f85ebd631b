#!/usr/bin/env bash
# Installs, from Debian, what the real node and `make testacc-e2e` need:
# containerd, runc, the CNI plugins, iptables and ipset (the NetworkPolicy
# enforcer's tools), iproute2, util-linux, debootstrap and a static C
# toolchain for the images. Installs only what is missing: on a machine
# that has them all it returns at once without touching apt. Needs root;
# otherwise it says what is missing and fails.
set -euo pipefail

pkgs=(containerd runc containernetworking-plugins iptables ipset iproute2 util-linux debootstrap gcc libc6-dev patch)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "realnode-deps: all installed: ${pkgs[*]}" >&2
  exit 0
fi
if [[ $(id -u) != 0 ]]; then
  echo "realnode-deps: missing ${missing[*]}; installing them needs root (apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "realnode-deps: installing ${missing[*]}" >&2
t0=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: containerd recommends nothing the node uses;
# the Debian services it ships are not started here (the node runs its own
# containerd inside its network namespace).
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "realnode-deps: installed in $(( $(date +%s) - t0 ))s" >&2
