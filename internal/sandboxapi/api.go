package sandboxapi

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// Resource and kind names of the four agent-sandbox kinds. Upstream's API
// packages have the group versions and the kind names (agentsv1beta1.SandboxKind,
// extv1beta1.SandboxTemplateKind, ...) but no resource names, GVRs, GVKs or
// CRD names: its controllers use controller-runtime's typed client, which
// needs none of them, while the provider reaches every object through a
// dynamic client, by GVR.
const (
	// SandboxResource is the plural resource name of Sandbox.
	SandboxResource = "sandboxes"
	// SandboxTemplateResource is the plural resource name of SandboxTemplate.
	SandboxTemplateResource = "sandboxtemplates"
	// SandboxWarmPoolResource is the plural resource name of SandboxWarmPool.
	SandboxWarmPoolResource = "sandboxwarmpools"
	// SandboxClaimResource is the plural resource name of SandboxClaim.
	SandboxClaimResource = "sandboxclaims"

	// The kinds of the lists, as the API server names them.
	SandboxListKind         = agentsv1beta1.SandboxKind + "List"
	SandboxTemplateListKind = extv1beta1.SandboxTemplateKind + "List"
	SandboxWarmPoolListKind = extv1beta1.SandboxWarmPoolKind + "List"
	SandboxClaimListKind    = extv1beta1.SandboxClaimKind + "List"
)

// Names of the CustomResourceDefinitions that serve the kinds
// ("<plural>.<group>").
var (
	SandboxCRDName         = crdName(agentsv1beta1.GroupVersion, SandboxResource)
	SandboxTemplateCRDName = crdName(extv1beta1.GroupVersion, SandboxTemplateResource)
	SandboxWarmPoolCRDName = crdName(extv1beta1.GroupVersion, SandboxWarmPoolResource)
	SandboxClaimCRDName    = crdName(extv1beta1.GroupVersion, SandboxClaimResource)
)

// Group-version-kinds and group-version-resources (for dynamic clients) of
// the four kinds, all v1beta1: the version every release the provider
// supports serves and stores (v0.5.x serves the deprecated v1alpha1 beside
// it, which the provider never uses).
var (
	SandboxGVK         = agentsv1beta1.GroupVersion.WithKind(agentsv1beta1.SandboxKind)
	SandboxTemplateGVK = extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxTemplateKind)
	SandboxWarmPoolGVK = extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxWarmPoolKind)
	SandboxClaimGVK    = extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxClaimKind)

	SandboxGVR         = agentsv1beta1.GroupVersion.WithResource(SandboxResource)
	SandboxTemplateGVR = extv1beta1.GroupVersion.WithResource(SandboxTemplateResource)
	SandboxWarmPoolGVR = extv1beta1.GroupVersion.WithResource(SandboxWarmPoolResource)
	SandboxClaimGVR    = extv1beta1.GroupVersion.WithResource(SandboxClaimResource)
)

func crdName(gv schema.GroupVersion, plural string) string { return plural + "." + gv.Group }

// AddToScheme registers upstream's v1beta1 kinds of both groups (Sandbox;
// and SandboxTemplate, SandboxWarmPool, SandboxClaim) with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	b := runtime.NewSchemeBuilder(agentsv1beta1.AddToScheme, extv1beta1.AddToScheme)
	return b.AddToScheme(s)
}

// CRDNames returns the names of the four CustomResourceDefinitions of
// agent-sandbox: the core one first, then the extensions alphabetically.
func CRDNames() []string {
	return []string{
		SandboxCRDName,
		SandboxClaimCRDName,
		SandboxTemplateCRDName,
		SandboxWarmPoolCRDName,
	}
}
