//go:build tools

// Package netpol pins the NetworkPolicy enforcer of the real node:
// sigs.k8s.io/kube-network-policies, unmodified, built from the Go module
// proxy by ../build-netpol.sh with its own dependency graph (it does not
// build inside the localcluster module: its containerd/nri needs an older
// runtime-spec than Kubernetes 1.37). Nothing here is compiled into
// localcluster.
package netpol

import _ "sigs.k8s.io/kube-network-policies/cmd"
