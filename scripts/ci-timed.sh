#!/usr/bin/env bash
# ci-timed.sh NAME COMMAND [ARGS...]: runs COMMAND and appends one line to
# .cache/ci/times.tsv: NAME, exit status, wall seconds, and the CPU seconds
# (user, system) of COMMAND and every descendant it waited for (bash's
# `times`), so .ci/run can say where its time and its two cores went.
# Exits with COMMAND's status.
set -uo pipefail
name=$1
shift
out=$(cd "$(dirname "$0")/.." && pwd)/.cache/ci/times.tsv
mkdir -p "$(dirname "$out")"
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
# The second line of `times`: the children's user and system time, as
# 1m2.345s 0m6.789s.
tmp=$(mktemp)
times >"$tmp" # in this shell: a subshell would report its own children
read -r _ _ cu cs < <(tr '\n' ' ' <"$tmp"; echo) # read fails at EOF without a newline (set -e)
rm -f "$tmp"
secs() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); printf "%.1f", a[1] * 60 + a[2] }'; }
printf '%s\t%d\t%.1f\t%s\t%s\n' "$name" "$rc" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$(secs "$cu")" "$(secs "$cs")" >>"$out"
exit "$rc"
