// Package crdcheck validates CustomResourceDefinitions the way the API server
// does on create: defaulting, then the full apiextensions validation (structural
// schema, defaults, CEL rules and their cost, printer columns, subresources,
// conversion). Tests use it so a bundle whose CRDs a cluster would reject
// fails long before it reaches one. It is test support only.
package crdcheck

import (
	"context"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// Validate returns the problems the API server would report when creating crd
// (an empty string when there are none). crd itself is not modified.
func Validate(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	in := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(in)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(in, &internal, nil); err != nil {
		return "", err
	}
	if errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
		return errs.ToAggregate().Error(), nil
	}
	return "", nil
}
