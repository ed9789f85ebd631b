// Package sandboxapi is the project's model of the kubernetes-sigs/agent-sandbox
// API. It owns:
//
//   - our own Go types for the served API, one package per group and version:
//     agents/v1beta1 (Sandbox, group agents.x-k8s.io) and extensions/v1beta1
//     (SandboxTemplate, SandboxWarmPool, SandboxClaim, group
//     extensions.agents.x-k8s.io), plus the deprecated v1alpha1 shapes in
//     agents/v1alpha1 and extensions/v1alpha1, kept only to generate the schemas
//     the offline v0.5.x bundles serve. Each package has its GroupVersion, kind
//     and resource names, GVKs/GVRs and AddToScheme; this package's
//     [AddToScheme] registers the two v1beta1 groups together;
//   - the label and annotation keys the upstream controller reads and writes,
//     and [NameHash], the FNV-1a label value it derives from object names;
//   - the CRDs generated from those types (crds/, embedded by package crds) and
//     the offline release bundles built from them (bundles/, for tests and the
//     demo only: the provider binary must not import package bundles).
//
// The types are written from upstream's published API, not copied: field and
// JSON names, validation, defaults, enums, subresources, printer columns and
// short names match what upstream v0.5.x/v1.0.x serves.
//
// Everything generated is reproduced byte for byte by
//
//	go generate ./internal/sandboxapi/...
//
// which runs, in this order: controller-gen for deepcopy (zz_generated.deepcopy.go
// in each API package), controller-gen for the v1beta1 CRDs (crds/*.yaml) and
// the v1alpha1-only CRDs (crds/v1alpha1/*.yaml, an input of the v0.5.x bundles,
// never installed on its own), then the bundle generator (bundles/gen). The
// tests in crds/ and bundles/gen fail when a committed file is stale.
package sandboxapi

//go:generate go tool -modfile=../../tools/go.mod controller-gen object paths=./agents/... paths=./extensions/...
//go:generate go tool -modfile=../../tools/go.mod controller-gen crd:maxDescLen=0 paths=./agents/v1beta1 paths=./extensions/v1beta1 output:crd:dir=./crds
//go:generate go tool -modfile=../../tools/go.mod controller-gen crd:maxDescLen=0 paths=./agents/v1alpha1 paths=./extensions/v1alpha1 output:crd:dir=./crds/v1alpha1
