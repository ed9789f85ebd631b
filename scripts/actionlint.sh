#!/usr/bin/env bash
# make actionlint: checks the GitHub Actions workflows and the local
# composite actions, then checks the checks.
#   1. actionlint (syntax, expressions and their types, job needs, runner
#      labels, inputs of known actions, script injection, and shellcheck on
#      run: scripts when shellcheck is on PATH, as on GitHub's runners).
#   2. Every third-party action is pinned by a full commit SHA with its
#      version in a comment ("uses: owner/repo@<40 hex> # vX.Y.Z"), and one
#      action has one SHA and one version everywhere. A tag can be moved to
#      other code after review; a SHA cannot.
#   3. A deliberately broken workflow (scripts/testdata/actionlint/broken.yml)
#      must fail both, with each rule it breaks: a check that stopped
#      finding anything would otherwise pass everything.
# Environment: ACTIONLINT, the actionlint binary (the GNUmakefile builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ACTIONLINT:?set ACTIONLINT to an actionlint binary (make actionlint builds one)}"

workflows=(.github/workflows/*.yml)
actions=(.github/actions/*/action.yml)
files=("${workflows[@]}" "${actions[@]}")
broken=scripts/testdata/actionlint/broken.yml

# pins FILE...: prints one line per action reference that is not pinned, and
# per action pinned to different SHAs or versions in different places.
pins() {
	local f line n ref action pin
	declare -A seen=()
	for f in "$@"; do
		while IFS=: read -r n line; do
			ref=$(sed -E 's/^[[:space:]]*(-[[:space:]]+)?uses:[[:space:]]*//' <<<"$line")
			[[ $ref =~ ^[\"\']?(\./|docker://) ]] && continue
			if ! grep -qE '^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40} # v[0-9]+\.[0-9]+\.[0-9]+$' <<<"$ref"; then
				echo "$f:$n: not pinned as \"owner/repo@<40-hex SHA> # vX.Y.Z\": $ref"
				continue
			fi
			action=${ref%%@*}
			pin=${ref#*@}
			if [[ -n ${seen[$action]:-} && ${seen[$action]%% at *} != "$pin" ]]; then
				echo "$f:$n: $action pinned to $pin here but to ${seen[$action]}"
			fi
			: "${seen[$action]:=$pin at $f:$n}"
		done < <(grep -nE '^[[:space:]]*(-[[:space:]]+)?uses:' "$f")
	done
}

# actionlint only looks at workflows; composite actions are checked by the
# workflows that use them (their inputs) and by the pin check.
"$ACTIONLINT" -no-color "${workflows[@]}"
unpinned=$(pins "${files[@]}")
if [[ -n $unpinned ]]; then
	echo "$unpinned" >&2
	exit 1
fi
echo "actionlint: ${#workflows[@]} workflows and ${#actions[@]} composite actions pass (actionlint $("$ACTIONLINT" -version | head -n1)$(command -v shellcheck >/dev/null && echo ', with shellcheck' || echo ', shellcheck not on PATH')); every action pinned by SHA"

# The checks check: the broken workflow fails with every rule it breaks.
want=(action expression job-needs runner-label)
# shellcheck disable=SC2016 # a Go template, not a shell expansion
if got=$("$ACTIONLINT" -no-color -format '{{range $e := .}}{{println $e.Kind}}{{end}}' "$broken" 2>&1); then
	echo "actionlint: $broken passed; it must fail" >&2
	exit 1
fi
for kind in "${want[@]}"; do
	if ! grep -qx "$kind" <<<"$got"; then
		"$ACTIONLINT" -no-color "$broken" >&2 || true
		echo "actionlint: $broken did not fail with rule [$kind] (rules seen: $(sort -u <<<"$got" | paste -sd' '))" >&2
		exit 1
	fi
done
if [[ -z $(pins "$broken") ]]; then
	echo "actionlint: the pin check passed $broken's actions/checkout@v4; it must fail" >&2
	exit 1
fi
echo "actionlint: $broken fails as it must: rules [${want[*]}] and the pin check"
