//go:build tools

// Package gvisor pins the gVisor release the real node runs: runsc and its
// containerd shim (containerd-shim-runsc-v1), built from the Go module
// proxy by ../build-gvisor.sh. A module of its own, so that gVisor's
// dependencies never mix with Kubernetes'. Nothing here is compiled into
// localcluster.
package gvisor

import (
	_ "gvisor.dev/gvisor/runsc"
	_ "gvisor.dev/gvisor/shim"
)
