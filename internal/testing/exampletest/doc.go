// Package exampletest keeps the configurations under examples/ working. Its
// tests (there is no other code):
//
//   - apply every example directory (quickstart, existing-cluster,
//     platform-teams, the last instantiating modules/agent-sandbox-platform
//     for two teams) with the real terraform CLI and a development build
//     of the provider, check what they created, check that a second plan
//     is empty, destroy them and check that everything is gone; all of it
//     against the same local stand-in for GKE that `make demo` runs
//     (package demo: local control plane, the real controller, GKE
//     emulator, release mirror), private to this package because the
//     examples install the controller, which is cluster-wide;
//   - apply every example again with the fast path on and off
//     (AGENTSANDBOX_FASTPATH, package provider) on one stand-in, with the
//     same checks, and require Terraform's plan -json and show -json of
//     each step to be identical (package tfjsoncmp says what is
//     normalised);
//   - fail when a resource or data source the provider serves has no
//     per-resource example for the docs, or when such an example no longer
//     validates against the schema;
//   - fail when the README's quick start no longer shows what `make demo`
//     applies.
package exampletest
