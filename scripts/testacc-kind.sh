#!/usr/bin/env bash
# Runs the acceptance suite on a kind cluster with the real upstream
# agent-sandbox release. Needs Docker (with privileged containers) and
# internet access to pull images; says precisely what is missing otherwise.
set -euo pipefail
missing=()
command -v docker >/dev/null 2>&1 || missing+=("the docker CLI")
command -v kind >/dev/null 2>&1 || missing+=("kind (go install sigs.k8s.io/kind@latest)")
if command -v docker >/dev/null 2>&1 && ! docker info >/dev/null 2>&1; then
  missing+=("a running Docker engine")
fi
if ((${#missing[@]})); then
  printf 'make testacc-kind needs: %s\n' "${missing[@]}" >&2
  echo "Use 'make test' for the offline suite against the local control plane." >&2
  exit 2
fi
echo "make testacc-kind is not available yet: it installs the upstream release with agentsandbox_controller," >&2
echo "which is still being built. Use 'make test'." >&2
exit 2
