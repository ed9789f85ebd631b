#!/usr/bin/env bash
# make testacc-releases: every resource's lifecycle tests (create, in-place
# update of every updatable attribute, import with ImportStateVerify,
# destroy with CheckDestroy, plus the release-specific tests named
# TestAcc*_release*) against each upstream release profile of
# internal/sandboxapi/releases, one local cluster per profile, in sequence:
# the profile's CRDs (v0.5.x: v1beta1 + v1alpha1 with a conversion webhook on
# 127.0.0.1; v1.0: v1beta1 only) and the stand-in controller behaving as that
# release does.
#
# agentsandbox_controller is not run here: its own tests install each
# release's bundle (v0.5.1, v0.5.6, v1.0.7) and upgrade between them.
# Environment: PROFILES="v0.5.0 v0.5.6" runs only those.
# Results: .cache/releases/results.tsv (profile, package, status, seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.cache/releases
mkdir -p "$OUT"
export CHECKPOINT_DISABLE=1
export GOFLAGS=${GOFLAGS:--buildvcs=false}

PROFILES=${PROFILES:-v0.5.0 v0.5.3 v0.5.6 v1.0}
PKGS=(./internal/resources/sandbox ./internal/resources/sandboxtemplate ./internal/resources/warmpool
	./internal/resources/sandboxclaim ./internal/resources/networkpolicy)
RUN='^TestAcc[A-Za-z]+_(basic|update|import|release[A-Za-z]*)$'

step() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

step "local control plane and test harness"
# AGENTSANDBOX_LOCALCLUSTER_BIN, if set, names an already built binary.
LC_BIN=${AGENTSANDBOX_LOCALCLUSTER_BIN:-$(internal/devenv/localcluster/build.sh | tail -n1)}
go build -o .cache/bin/testenv ./internal/testing/testenv/cmd/testenv
# Compiled once; each profile's run reuses the test binaries from the cache.
go test -count=1 -run XXX_compile_only "${PKGS[@]}" >/dev/null

: >"$OUT/results.tsv"
failed=()
for p in $PROFILES; do
	step "release profile $p"
	t0=$SECONDS
	if AGENTSANDBOX_LOCALCLUSTER_BIN=$LC_BIN AGENTSANDBOX_TEST_PROFILE=$p .cache/bin/testenv -- \
		env TF_ACC=1 go test -count=1 -timeout 30m -json -run "$RUN" "${PKGS[@]}" >"$OUT/$p.json"; then
		status=ok
	else
		status=FAIL
		failed+=("$p")
	fi
	# One line per package: what passed, what failed, how long.
	go run ./internal/testing/testenv/cmd/releasesummary -profile "$p" <"$OUT/$p.json" | tee -a "$OUT/results.tsv"
	echo "    profile $p: $status in $((SECONDS - t0)) s"
done

step "summary (.cache/releases/results.tsv)"
column -t -s $'\t' "$OUT/results.tsv"
if ((${#failed[@]})); then
	echo "failed profiles: ${failed[*]} (go test -json output in $OUT/<profile>.json)"
	exit 1
fi
