// Command realcontroller builds upstream's agent-sandbox controller of the
// given releases from the Go module proxy into the repository's cache
// (.cache/agent-sandbox-controller/<release>/), one release after the
// other, and prints one line per release: the binary's path and what it is
// (release, module checksum, Go version). A release already built is only
// inspected. "default" names the release of `make test` and `make demo`
// (releases.Default), "all" every release the project supports.
//
//	go run ./internal/devenv/realcontroller/cmd/realcontroller v1.0.3 v0.5.6
//	go run ./internal/devenv/realcontroller/cmd/realcontroller default
//	go run ./internal/devenv/realcontroller/cmd/realcontroller all
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/realcontroller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: realcontroller all | default | <release>...")
		os.Exit(2)
	}
	switch {
	case len(args) == 1 && args[0] == "all":
		args = nil
		for _, p := range releases.All() {
			args = append(args, p.Name)
		}
	case len(args) == 1 && args[0] == "default":
		args = []string{releases.Default.Name}
	}
	root, err := testenv.FindRepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "realcontroller:", err)
		os.Exit(1)
	}
	for _, v := range args {
		b, err := realcontroller.Build(ctx, realcontroller.DefaultCacheDir(root), v, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "realcontroller:", err)
			os.Exit(1)
		}
		fmt.Printf("%s\t%s\n", b.Path, b)
	}
}
