//go:build tools

// Package netpol pins the NetworkPolicy enforcer of the real node:
// kube-router's network policy controller
// (github.com/cloudnativelabs/kube-router/v2), unmodified, built from the Go
// module proxy by ../build-netpol.sh with its own dependency graph, and run
// with routing and the service proxy off. Nothing here is compiled into
// localcluster.
package netpol

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
