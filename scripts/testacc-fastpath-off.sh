#!/usr/bin/env bash
# CI's slice of the acceptance suite with the provider's fast path switched
# off (AGENTSANDBOX_FASTPATH=off: every call is terraform-plugin-framework's,
# see the README's performance section): make test runs everything with the
# fast path on, and its comparison tests (exampletest's
# TestAccExamples, bench's TestFastPathOnAndOff) apply every
# example and the benchmark's configuration both ways; this adds, with it
# off,
#   - internal/testing/matrixacc: one configuration of every resource and
#     data source (but agentsandbox_controller) created, updated in place,
#     imported with ImportStateVerify and destroyed;
#   - internal/resources/sandboxtemplate: every acceptance test of the type
#     with the largest schema, whose plans and reads the fast path answers
#     most of.
# About 1m50s on a warm 2-core machine. The whole suite without the fast
# path: AGENTSANDBOX_FASTPATH=off make test.
set -euo pipefail
cd "$(dirname "$0")/.."

go build -o .cache/bin/testenv ./internal/testing/testenv/cmd/testenv
AGENTSANDBOX_LOCALCLUSTER_BIN="$(internal/devenv/localcluster/build.sh | tail -n1)"
export AGENTSANDBOX_LOCALCLUSTER_BIN
exec .cache/bin/testenv -- env TF_ACC=1 AGENTSANDBOX_FASTPATH=off \
  go test -count=1 -timeout 20m ./internal/testing/matrixacc ./internal/resources/sandboxtemplate
