#!/usr/bin/env bash
# make testacc-e2e: the end-to-end acceptance run on a real node (see
# internal/testing/realnode). The provider's resources are applied to a local
# cluster whose node runs sandbox pods in gVisor and enforces NetworkPolicies
# (kube-router's network policy controller); the checks run inside the
# sandboxes. It FAILS, saying why, on a machine that cannot run the real node
# (not root, missing Debian packages: scripts/realnode-deps.sh installs them,
# kernel features), and when any check fails or is skipped.
#
# Builds what it needs and caches it under .cache/: the localcluster binary
# (~10 min cold), gVisor (~2-3 min), kube-router (~2 min), the images (~1-2
# min, needs Debian's mirror). The cluster directory is .cache/e2e/<run>; it
# is removed after a clean run and kept (with every log) after a failure.
# Whatever happens to the test process, `localcluster down` runs on that
# directory afterwards. The probes' verdicts are written to
# .cache/e2e/probes.json.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

run="$(date -u +%Y%m%d-%H%M%S)-$$"
export AGENTSANDBOX_E2E=1
export AGENTSANDBOX_E2E_DIR="$root/.cache/e2e/$run"
export AGENTSANDBOX_E2E_RESULTS="$root/.cache/e2e/probes.json"
export CHECKPOINT_DISABLE=1
mkdir -p "$root/.cache/e2e"
rm -f "$AGENTSANDBOX_E2E_RESULTS"

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
log="$(mktemp)"  # not under the cluster directory: the leftover check looks for processes naming it
rc=0
go test -count=1 -timeout "${E2E_TIMEOUT:-40m}" -v -run '^TestE2E' ./internal/testing/realnode/ 2>&1 | tee "$log" || rc=$?
echo "testacc-e2e: finished in $(( $(date +%s) - t0 ))s"
# A skipped check proves nothing: here that is a failure too.
if grep -E -- '--- SKIP|^e2e: SKIP' "$log" >/dev/null; then
  echo "testacc-e2e: FAIL: checks were skipped:" >&2
  grep -E -- '--- SKIP|^e2e: SKIP' "$log" >&2
  rc=1
fi
if ((rc == 0)) && ! grep -q -- '--- PASS: TestE2E ' "$log"; then
  echo "testacc-e2e: FAIL: TestE2E did not run and pass" >&2
  rc=1
fi
rm -f "$log"
exit "$rc"
