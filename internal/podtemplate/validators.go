package podtemplate

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Formats checked by attribute validators. They mirror the API server's
// pod validation, so a value it would refuse fails at plan time.
var (
	// Relaxed environment variable names (GA in Kubernetes 1.34): printable
	// ASCII except '='.
	envName = regexp.MustCompile(`^[\x20-\x3C\x3E-\x7E]+$`)
	absPath = regexp.MustCompile(`^/`)
	// RFC 7230 token characters.
	headerName = regexp.MustCompile("^[-A-Za-z0-9!#$%&'*+.^_|~`]+$")
	octalMode  = regexp.MustCompile(`^0?[0-7]{3}$`)
	capability = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// runtimeClassName accepts "" (no RuntimeClass) or a RuntimeClass name.
var runtimeClassName = validators.Valid("Invalid RuntimeClass name",
	"must be \"\" (the node's default runtime) or a RuntimeClass name (a lower-case RFC 1123 subdomain)",
	func(s string) bool { return s == "" || len(k8svalidation.IsDNS1123Subdomain(s)) == 0 })

// relPath is a validator, not a regexp: Go's regexp cannot express "no '..'
// path element".
var relPath = relPathValidator{}

type relPathValidator struct{}

func (relPathValidator) Description(context.Context) string {
	return "must be a relative path without '..' elements"
}

func (v relPathValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v relPathValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if !isRelPath(req.ConfigValue.ValueString()) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid path",
			fmt.Sprintf("%q %s.", req.ConfigValue.ValueString(), v.Description(ctx)))
	}
}

func isRelPath(s string) bool {
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
