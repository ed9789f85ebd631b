package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// Group is the API group of the extension kinds.
	Group = "extensions.agents.x-k8s.io"
	// Version is the API version these types describe.
	Version = "v1beta1"

	SandboxTemplateKind     = "SandboxTemplate"
	SandboxTemplateListKind = "SandboxTemplateList"
	SandboxWarmPoolKind     = "SandboxWarmPool"
	SandboxWarmPoolListKind = "SandboxWarmPoolList"
	SandboxClaimKind        = "SandboxClaim"
	SandboxClaimListKind    = "SandboxClaimList"

	// Plural resource names.
	SandboxTemplateResource = "sandboxtemplates"
	SandboxWarmPoolResource = "sandboxwarmpools"
	SandboxClaimResource    = "sandboxclaims"

	// Names of the CustomResourceDefinitions that serve the kinds.
	SandboxTemplateCRDName = SandboxTemplateResource + "." + Group
	SandboxWarmPoolCRDName = SandboxWarmPoolResource + "." + Group
	SandboxClaimCRDName    = SandboxClaimResource + "." + Group
)

var (
	// GroupVersion is extensions.agents.x-k8s.io/v1beta1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	SandboxTemplateGVK = GroupVersion.WithKind(SandboxTemplateKind)
	SandboxWarmPoolGVK = GroupVersion.WithKind(SandboxWarmPoolKind)
	SandboxClaimGVK    = GroupVersion.WithKind(SandboxClaimKind)

	SandboxTemplateGVR = GroupVersion.WithResource(SandboxTemplateResource)
	SandboxWarmPoolGVR = GroupVersion.WithResource(SandboxWarmPoolResource)
	SandboxClaimGVR    = GroupVersion.WithResource(SandboxClaimResource)

	// SchemeBuilder collects the functions that add this group-version to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers the three kinds and their lists with a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&SandboxTemplate{}, &SandboxTemplateList{},
		&SandboxWarmPool{}, &SandboxWarmPoolList{},
		&SandboxClaim{}, &SandboxClaimList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
