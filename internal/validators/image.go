package validators

import (
	"errors"
	"strings"

	"github.com/distribution/reference"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	corev1 "k8s.io/api/core/v1"
)

// ImageReference accepts a container image reference as the kubelet parses
// it (github.com/distribution/reference, ParseNormalizedNamed): a lower-case
// repository path, an optional tag and an optional digest
// (sha256: and 64 hex digits). Without this, "Python:3.13" or
// "python@sha256:abc" is accepted by the API server and the pod only fails
// on its node with InvalidImageName, after the apply has waited.
func ImageReference() validator.String {
	return stringCheck{
		summary: "Invalid image reference",
		desc:    "must be an image reference such as python:3.13, registry.example.com/team/agent:1.2 or repo@sha256:<64 hex digits>",
		check: func(s string) []string {
			if s == "" {
				return []string{"the image is empty"}
			}
			if strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\n") {
				return []string{"it contains whitespace"}
			}
			if _, err := reference.ParseNormalizedNamed(s); err != nil {
				return []string{imageProblem(s, err)}
			}
			return nil
		},
	}
}

func imageProblem(s string, err error) string {
	name, _, _ := strings.Cut(s, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i] // drop the tag
	}
	repo := name
	if i := strings.Index(name, "/"); i >= 0 && strings.ContainsAny(name[:i], ".:") {
		repo = name[i+1:] // a registry host may have capitals; the path may not
	}
	switch {
	case errors.Is(err, reference.ErrNameContainsUppercase) || repo != strings.ToLower(repo):
		return "the repository must be lower case (the kubelet refuses it with InvalidImageName); did you mean " +
			strings.Replace(s, repo, strings.ToLower(repo), 1) + "?"
	case strings.Contains(s, "@"):
		return "the digest is malformed (" + err.Error() + "): it must be an algorithm and its hex value, such as sha256: followed by 64 hex digits"
	}
	return err.Error()
}

// ImagePullPolicy accepts a container's imagePullPolicy, as the API server
// does (validatePullPolicy, pkg/apis/core/validation): Always, IfNotPresent
// or Never.
func ImagePullPolicy() validator.String {
	return stringvalidator.OneOf(string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever))
}
