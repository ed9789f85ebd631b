#!/usr/bin/env bash
# make test: unit tests plus the acceptance suite against a real API server.
#
# Two environments run side by side (each `testenv`: its own local control
# plane, the release's CRDs and the release's own controller; or the cluster
# of KUBECONFIG / AGENTSANDBOX_TEST_KUBECONFIG):
#
#   1. every package except the serial ones, TEST_PACKAGES packages at a time;
#   2. the serial packages (SERIAL_PKGS: agentsandbox_controller, whose tests
#      install, upgrade and delete the cluster-wide CRDs and controller every
#      other package relies on), alone on a cluster of their own, so no other
#      test sees the CRDs change under it.
#
# On a cluster given by KUBECONFIG there is only one cluster to share, so the
# serial packages run after the others, as before. The serial run's output
# goes to .cache/test/serial.log and is printed after the first run's; the
# exit status is non-zero if either run failed.
#
# Environment (set by the GNUmakefile): GO, TESTENV (the testenv binary),
# TEST_PACKAGES, TEST_TIMEOUT, TESTARGS, SERIAL_PKGS, and
# AGENTSANDBOX_LOCALCLUSTER_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
TESTENV=${TESTENV:-.cache/bin/testenv}
TEST_PACKAGES=${TEST_PACKAGES:-4}
TEST_TIMEOUT=${TEST_TIMEOUT:-45m}
SERIAL_PKGS=${SERIAL_PKGS:-./internal/resources/controller/...}
testargs=()
eval "testargs=(${TESTARGS:-})" # shell words, as make test TESTARGS="-run 'A|B'" means them
read -r -a serial <<<"$SERIAL_PKGS"

# Every package but the serial ones (and their subpackages), the slowest
# first: go test starts packages in the order given (TEST_PACKAGES at a
# time), so a long package listed last would run alone at the end. The
# order only schedules; a package missing here runs after these.
slow=(
  internal/testing/exampletest internal/resources/gke internal/resources/sandboxclaim
  internal/resources/sandbox internal/resources/networkpolicy internal/resources/warmpool
  bench internal/resources/sandboxtemplate internal/fastpath internal/testing/faultproxy/faultacc
  provider internal/resources/isolationreport internal/podtemplate internal/testing/matrixacc
)
module=$("$GO" list -m)
mapfile -t serial_list < <("$GO" list "${serial[@]}")
mapfile -t all < <("$GO" list ./... | grep -vxF -f <(printf '%s\n' "${serial_list[@]}"))
others=()
for p in "${slow[@]}"; do
  if printf '%s\n' "${all[@]}" | grep -qxF "$module/$p"; then
    others+=("$module/$p")
  fi
done
mapfile -t -O "${#others[@]}" others < <(printf '%s\n' "${all[@]}" | grep -vxF -f <(printf '%s\n' "${others[@]}"))

main_run() {
  "$TESTENV" -- env TF_ACC=1 "$GO" test -count=1 -p "$TEST_PACKAGES" -timeout "$TEST_TIMEOUT" "${testargs[@]}" "${others[@]}"
}
serial_run() {
  "$TESTENV" -- env TF_ACC=1 "$GO" test -count=1 -timeout "$TEST_TIMEOUT" "${testargs[@]}" "${serial_list[@]}"
}

if [[ -n ${KUBECONFIG:-}${AGENTSANDBOX_TEST_KUBECONFIG:-} ]]; then
  # One cluster: the serial packages after the others, never beside them.
  main_run && serial_run
  exit
fi

mkdir -p .cache/test
log=.cache/test/serial.log
echo "make test: ${#serial_list[@]} serial package(s) on a cluster of their own, beside the other ${#others[@]}; their output: $log (printed at the end)"
serial_run >"$log" 2>&1 &
serial_pid=$!
trap 'kill -TERM "$serial_pid" 2>/dev/null || true' EXIT

main_rc=0
main_run || main_rc=$?

serial_rc=0
wait "$serial_pid" || serial_rc=$?
trap - EXIT
printf '\n==> the serial package(s), on their own cluster: %s (exit status %d)\n' "${serial_list[*]}" "$serial_rc"
cat "$log"
if ((main_rc != 0 || serial_rc != 0)); then
  echo "make test: FAIL (packages: exit status $main_rc; serial packages: exit status $serial_rc)" >&2
  exit 1
fi
