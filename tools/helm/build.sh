#!/usr/bin/env bash
# Builds the Helm v4 CLI from the Go module proxy (nothing else is
# downloaded) and caches it under .cache/helm/<version>-<hash of this
# script>/helm. Prints the binary's path on its last line. The tests that
# take over a Helm installation of upstream's chart (and hand it back to
# Helm) run this CLI against the local control plane; `make helm` builds it
# ahead of them.
#
#   tools/helm/build.sh            v4.3.2
#   HELM_VERSION=v4.3.2 tools/helm/build.sh
#
# helm.sh/helm/v4's go.mod has no replace directive, so `go install
# pkg@version` builds it as released (-mod=mod: the module is not in this
# repository's go.mod). Cold: about 4 min of CPU (8-9 min wall on a busy
# 2-core machine); warm, from Go's build cache, seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
VERSION=${HELM_VERSION:-v4.3.2}
SELF_HASH=$(sha256sum tools/helm/build.sh | cut -c1-12)
OUT=$ROOT/.cache/helm/$VERSION-$SELF_HASH
if [[ ! -x $OUT/helm ]]; then
	t0=$SECONDS
	printf 'building helm %s from the Go module proxy into %s\n' "$VERSION" "$OUT" >&2
	mkdir -p "$OUT.tmp"
	GOFLAGS=-mod=mod GOBIN=$OUT.tmp CGO_ENABLED=0 GOTOOLCHAIN=${GOTOOLCHAIN:-local} \
		"$GO" install -trimpath -ldflags "-X helm.sh/helm/v4/internal/version.version=$VERSION" "helm.sh/helm/v4/cmd/helm@$VERSION"
	rm -rf "$OUT"
	mv "$OUT.tmp" "$OUT"
	printf 'built helm %s in %ds\n' "$VERSION" $((SECONDS - t0)) >&2
fi
echo "$OUT/helm"
