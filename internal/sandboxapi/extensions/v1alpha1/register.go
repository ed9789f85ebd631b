package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is extensions.agents.x-k8s.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "extensions.agents.x-k8s.io", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this group-version to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers the v1alpha1 kinds and their lists with a scheme.
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
