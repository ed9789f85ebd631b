#!/usr/bin/env bash
# make demo / make demo-destroy. The demo (GKE emulator + local control plane +
# quickstart example) lands with the demo work; until then this says so
# instead of pretending.
set -euo pipefail
echo "make demo is not available yet: it needs the sandbox resources, the controller installer, the network" >&2
echo "policy and the GKE emulator, which are still being built. Run 'make test' to exercise what exists." >&2
exit 2
