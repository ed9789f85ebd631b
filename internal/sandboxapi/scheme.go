package sandboxapi

import (
	"k8s.io/apimachinery/pkg/runtime"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// AddToScheme registers the v1beta1 kinds of both groups (Sandbox; and
// SandboxTemplate, SandboxWarmPool, SandboxClaim) with a scheme. The
// deprecated v1alpha1 packages are not included; add them explicitly if a
// test needs to decode v1alpha1 objects.
func AddToScheme(s *runtime.Scheme) error {
	b := runtime.NewSchemeBuilder(agentsv1beta1.AddToScheme, extv1beta1.AddToScheme)
	return b.AddToScheme(s)
}

// CRDNames returns the names of the four CustomResourceDefinitions of
// agent-sandbox: the core one first, then the extensions alphabetically.
func CRDNames() []string {
	return []string{
		agentsv1beta1.SandboxCRDName,
		extv1beta1.SandboxClaimCRDName,
		extv1beta1.SandboxTemplateCRDName,
		extv1beta1.SandboxWarmPoolCRDName,
	}
}
