#!/usr/bin/env bash
# make testacc-releases: every resource's lifecycle tests (create, in-place
# update of every updatable attribute, import with ImportStateVerify,
# destroy with CheckDestroy, plus the release-specific tests named
# TestAcc*_release*) against each real upstream release of
# internal/sandboxapi/releases, one local cluster per release: the release's
# own CRDs (v0.5.x: v1beta1 + v1alpha1 with the conversion webhook that its
# controller serves; v1.0.x: v1beta1 only) and the release's own controller
# (upstream's cmd/agent-sandbox-controller at that tag, built from the Go
# module proxy by internal/devenv/realcontroller, cached in
# .cache/agent-sandbox-controller, run out of cluster).
#
# The run is mostly waiting (for the controller, for Terraform, and on
# v0.5.x for the claim controller's one-minute TemplateNotFound requeue), so
# it is laid out to wait in parallel:
#   - the test binaries and the controllers are built once, before any
#     cluster starts, and run directly;
#   - every release has its own cluster and all releases run at once;
#   - inside a profile each test runs in a process of its own, at most
#     RELEASES_JOBS (default 6) at a time, longest first, against the
#     profile's cluster (tests use namespaces of their own; request counters
#     are per process, so a test that counts requests is not disturbed).
# What each test checks is unchanged.
#
# agentsandbox_controller is not run here: its own tests install release
# bundles and upgrade between them.
# Environment: RELEASES="v0.5.0 v0.5.6" runs only those (CI leaves out
# v1.0.3, the release make test already runs); RELEASES_JOBS as above;
# RELEASES_SLICE=ci runs CI's slice (below).
# Results: .cache/releases/results.tsv (profile, package, test, status,
# seconds); each test's go test -json output in .cache/releases/<profile>/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.cache/releases
BIN=$OUT/bin
MODULE=github.com/agentsandbox/terraform-provider-agentsandbox
# What runs, as "<package below internal/> <test regexp>", longest first so
# the slowest tests do not start last (the claim's release tests wait for
# one-minute requeues on v0.5.x). By default every family's lifecycle tests
# and the release-specific tests; RELEASES_SLICE=ci (what CI runs) the
# one-configuration lifecycle of every resource (internal/testing/matrixacc:
# create, update in place, import, destroy) and the release-specific tests.
RELEASE_RUN='^TestAcc[A-Za-z]+_release[A-Za-z]*$'
if [[ ${RELEASES_SLICE:-} == ci ]]; then
	SPEC=("resources/sandboxclaim $RELEASE_RUN" "resources/sandboxtemplate $RELEASE_RUN"
		"testing/matrixacc ^TestAccMatrix_lifecycle\$")
else
	SPEC=()
	for p in sandboxclaim warmpool sandboxtemplate sandbox networkpolicy; do
		SPEC+=("resources/$p ^TestAcc[A-Za-z]+_(basic|update|import|release[A-Za-z]*)\$")
	done
fi
PKGS=()
for s in "${SPEC[@]}"; do PKGS+=("./internal/${s%% *}"); done

# Inside a profile's environment (testenv re-runs this script): run that
# profile's tests, RELEASES_JOBS at a time, and fail if any fails.
if [[ ${1:-} == --profile-jobs ]]; then
	profile=$2
	dir=$OUT/$profile
	rm -rf "$dir" && mkdir -p "$dir"
	# Longest first, so the slowest tests do not start last: the claim's
	# release tests (one-minute requeues on v0.5.x) and the updates.
	jobs=()
	for s in "${SPEC[@]}"; do
		p=${s%% *} run=${s#* }
		tests=$(cd "internal/$p" && "$BIN/$(basename "$p").test" -test.list "$run" | grep '^Test' || true)
		if [[ -z $tests ]]; then
			echo "testacc-releases: no test of internal/$p matches $run" >&2
			exit 1
		fi
		for t in $tests; do
			case $t in
			*_release* | *_update) jobs=("$p $t" "${jobs[@]}") ;;
			*) jobs+=("$p $t") ;;
			esac
		done
	done
	runjob() {
		local pkg=$1 test=$2 rc=0 name
		name=$(basename "$pkg")
		(cd "$ROOT/internal/$pkg" &&
			TF_ACC=1 go tool test2json -t -p "$MODULE/internal/$pkg" \
				"$BIN/$name.test" -test.v=test2json -test.timeout=30m -test.run "^$test\$" \
				>"$dir/$name.$test.json" 2>&1) || rc=$?
		echo "$rc" >"$dir/$name.$test.rc"
	}
	running=0
	for j in "${jobs[@]}"; do
		if ((running >= ${RELEASES_JOBS:-6})); then
			wait -n || true
			running=$((running - 1))
		fi
		runjob $j &
		running=$((running + 1))
	done
	wait
	status=0
	for f in "$dir"/*.rc; do
		[[ $(cat "$f") == 0 ]] || status=1
	done
	exit $status
fi

export CHECKPOINT_DISABLE=1
export GOFLAGS=${GOFLAGS:--buildvcs=false}
RELEASES=${RELEASES:-${PROFILES:-v0.5.0 v0.5.2 v0.5.3 v0.5.5 v0.5.6 v1.0.1 v1.0.3}}
PROFILES=$RELEASES
step() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
t0=$SECONDS

step "local control plane, test harness, test binaries and the controllers of $RELEASES"
# AGENTSANDBOX_LOCALCLUSTER_BIN, if set, names an already built binary.
LC_BIN=${AGENTSANDBOX_LOCALCLUSTER_BIN:-$(internal/devenv/localcluster/build.sh | tail -n1)}
mkdir -p "$BIN"
go build -o .cache/bin/testenv ./internal/testing/testenv/cmd/testenv
go build -o "$BIN/releasesummary" ./internal/testing/testenv/cmd/releasesummary
go test -c -o "$BIN/" "${PKGS[@]}"
# One release after the other: two cold builds side by side take as long
# as both in a row and twice the memory.
go run ./internal/devenv/realcontroller/cmd/realcontroller $RELEASES | tee "$OUT/controllers.tsv"
echo "    built in $((SECONDS - t0)) s"

step "releases $PROFILES, at once"
declare -A pid start
for p in $PROFILES; do
	start[$p]=$SECONDS
	AGENTSANDBOX_LOCALCLUSTER_BIN=$LC_BIN AGENTSANDBOX_TEST_RELEASE=$p \
		.cache/bin/testenv -- "$ROOT/scripts/testacc-releases.sh" --profile-jobs "$p" >"$OUT/$p.log" 2>&1 &
	pid[$p]=$!
done
: >"$OUT/results.tsv"
failed=()
for p in $PROFILES; do
	status=ok
	wait "${pid[$p]}" || { status=FAIL; failed+=("$p"); }
	# One line per test: what passed, what failed, how long. A release
	# whose environment failed before any test ran has no output: say so
	# and show why, instead of ending here without a word (set -e).
	if compgen -G "$OUT/$p/*.json" >/dev/null; then
		cat "$OUT/$p"/*.json | "$BIN/releasesummary" -profile "$p" | tee -a "$OUT/results.tsv" || status=FAIL
	else
		status=FAIL
		echo "    release $p: no test ran; the end of its environment log ($OUT/$p.log):"
		tail -n 40 "$OUT/$p.log" 2>/dev/null | sed 's/^/      /' || true
	fi
	[[ $status == ok || " ${failed[*]} " == *" $p "* ]] || failed+=("$p")
	echo "    release $p: $status in $((SECONDS - start[$p])) s (environment log: $OUT/$p.log)"
done

step "summary (.cache/releases/results.tsv), $((SECONDS - t0)) s in all"
column -t -s $'\t' "$OUT/results.tsv"
if ((${#failed[@]})); then
	echo "failed releases: ${failed[*]} (each test's go test -json output in $OUT/<profile>/)"
	exit 1
fi
