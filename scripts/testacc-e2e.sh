#!/usr/bin/env bash
# make testacc-e2e: the end-to-end acceptance run on a real node (see
# internal/testing/realnode). The provider's resources are applied to a local cluster whose
# node runs sandbox pods in gVisor and enforces NetworkPolicies; the checks run
# inside the sandboxes. On a machine that cannot run the real node (not root,
# missing Debian packages, kernel features) the test skips and says why.
#
# Builds what it needs and caches it: the localcluster binary (~10 min cold),
# gVisor (~2-3 min cold), the images (~1-2 min cold, needs Debian's mirror).
# The cluster directory is .cache/e2e/<run>; it is removed after a clean run
# and kept (with every log) after a failure. Whatever happens to the test
# process, `localcluster down` runs on that directory afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

run="$(date -u +%Y%m%d-%H%M%S)-$$"
export AGENTSANDBOX_E2E=1
export AGENTSANDBOX_E2E_DIR="$root/.cache/e2e/$run"
export CHECKPOINT_DISABLE=1

down_leftover() {
  # Second line of defence: the test stops its cluster itself and checks for
  # leftovers; if it was killed (timeout, signal), stop what it left here.
  local state="$AGENTSANDBOX_E2E_DIR/state.json"
  if [[ -f $state ]]; then
    local bin
    bin="$(sed -n 's/.*"binary": *"\([^"]*\)".*/\1/p' "$state" | head -n1)"
    if [[ -x $bin ]]; then
      "$bin" down --dir "$AGENTSANDBOX_E2E_DIR" >/dev/null 2>&1 || true
    fi
  fi
}
trap down_leftover EXIT

t0=$(date +%s)
go test -count=1 -timeout "${E2E_TIMEOUT:-40m}" -v -run '^TestE2E' ./internal/testing/realnode/ 2>&1
echo "testacc-e2e: finished in $(( $(date +%s) - t0 ))s"
