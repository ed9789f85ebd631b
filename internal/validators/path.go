package validators

import (
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// RelativePath accepts a non-empty relative path with no ".." element (a
// key's path inside a volume, a sub-path of a mount), as the API server
// requires. It is a function, not a regexp: Go's regexp cannot express "no
// '..' path element".
func RelativePath() validator.String {
	return Valid("Invalid path", "must be a relative path without '..' elements", IsRelativePath)
}

// IsRelativePath reports whether s is a non-empty relative path with no
// ".." element.
func IsRelativePath(s string) bool {
	if s == "" || strings.HasPrefix(s, "/") {
		return false
	}
	for _, el := range strings.Split(s, "/") {
		if el == ".." {
			return false
		}
	}
	return true
}
