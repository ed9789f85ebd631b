package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// Group is the API group of the Sandbox kind.
	Group = "agents.x-k8s.io"
	// Version is the API version these types describe.
	Version = "v1beta1"

	// SandboxKind is the kind of a Sandbox object.
	SandboxKind = "Sandbox"
	// SandboxListKind is the kind of a list of Sandbox objects.
	SandboxListKind = "SandboxList"
	// SandboxResource is the plural resource name of Sandbox.
	SandboxResource = "sandboxes"
	// SandboxCRDName is the name of the CustomResourceDefinition that serves Sandbox.
	SandboxCRDName = SandboxResource + "." + Group
)

var (
	// GroupVersion is agents.x-k8s.io/v1beta1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SandboxGVK identifies the Sandbox kind.
	SandboxGVK = GroupVersion.WithKind(SandboxKind)
	// SandboxGVR identifies the sandboxes resource (for dynamic clients).
	SandboxGVR = GroupVersion.WithResource(SandboxResource)

	// SchemeBuilder collects the functions that add this group-version to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers Sandbox and SandboxList with a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Sandbox{}, &SandboxList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
