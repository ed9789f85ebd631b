#!/usr/bin/env bash
# scripts/bench-claims.sh: how long an agent waits for a sandbox, on the real
# node (see internal/testing/realnode: gVisor, kube-router, the release's own
# controller and router), warm (claimed from a warm pool) and cold (a pool of
# zero: the claim creates the sandbox). Each claim is timed from the official
# Go SDK's sandbox.New to the answer of its first command through the router;
# upstream's own claim latency histograms (agent_sandbox_claim_*startup_latency_ms)
# are read from the controller's metrics endpoint beside them, and the load
# average before and after each series. Not run in CI (root, ~10 min).
#
#   sudo scripts/bench-claims.sh            # N=20 claims of each kind
#   N=50 sudo scripts/bench-claims.sh
#
# Writes bench/results/claims-<UTC date>.json and prints a Markdown table of it.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

run="bench-$(date -u +%Y%m%d-%H%M%S)-$$"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
out="$root/bench/results/claims-$(date -u +%Y%m%d).json"
export AGENTSANDBOX_E2E=1 AGENTSANDBOX_BENCH=1 CHECKPOINT_DISABLE=1
export AGENTSANDBOX_E2E_DIR="$root/.cache/e2e/$run"
export AGENTSANDBOX_E2E_CONTROLLER_METRICS="127.0.0.1:$port"
export AGENTSANDBOX_BENCH_OUT="$out"
export AGENTSANDBOX_BENCH_N="${N:-20}"
mkdir -p "$root/.cache/e2e" "$root/bench/results"

down_leftover() {
  # As scripts/testacc-e2e.sh: stop what a killed run left.
  local state="$AGENTSANDBOX_E2E_DIR/state.json"
  if [[ -f $state ]]; then
    local bin
    bin="$(sed -n 's/.*"binary": *"\([^"]*\)".*/\1/p' "$state" | head -n1)"
    [[ -x $bin ]] && "$bin" down --dir "$AGENTSANDBOX_E2E_DIR" >/dev/null 2>&1 || true
  fi
}
trap down_leftover EXIT

go test -count=1 -timeout "${BENCH_TIMEOUT:-90m}" -v -run '^TestBenchClaims$' ./internal/testing/realnode/
jq -r '
  "release \(.release), started \(.started)\n",
  "| claims | n | p50 (ms) | p95 (ms) | min (ms) | max (ms) | launch type (pod age) | load average before / after |",
  "|---|---|---|---|---|---|---|---|",
  (. as $r | ["warm", "cold"][] as $k | $r[$k] |
    "| \($k) | \(.n) | \(.p50_ms) | \(.p95_ms) | \(.min_ms) | \(.max_ms) | \(.launch_types) | \($r.load[$k + "_before"]) / \($r.load[$k + "_after"]) |"),
  "",
  "| upstream metric | count | mean (ms) | p50 (ms) | p95 (ms) |",
  "|---|---|---|---|---|",
  (.upstream_metrics | to_entries[] | "| \(.key) | \(.value.count) | \(.value.mean_ms | floor) | \(.value.p50_ms | floor) | \(.value.p95_ms | floor) |"),
  "", .upstream_metrics_notes' "$out"
