package podtemplate

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// Formats checked by attribute validators. They mirror the API server's
// pod validation, so a value it would refuse fails at plan time.
var (
	noSpace = regexp.MustCompile(`^\S+$`)
	// Relaxed environment variable names (GA in Kubernetes 1.34): printable
	// ASCII except '='.
	envName = regexp.MustCompile(`^[\x20-\x3C\x3E-\x7E]+$`)
	absPath = regexp.MustCompile(`^/`)
	// RFC 7230 token characters.
	headerName = regexp.MustCompile("^[-A-Za-z0-9!#$%&'*+.^_|~`]+$")
	portNumber = regexp.MustCompile(`^([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$`)
	octalMode  = regexp.MustCompile(`^0?[0-7]{3}$`)
	capability = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// probePort accepts a port number or a port name. (stringvalidator.Any
// would report the failure of both alternatives; one message is clearer.)
var probePort = stringFunc{
	summary: "Invalid port",
	desc:    "must be a port number from 1 to 65535 or the name of a container port (an IANA service name such as http)",
	ok: func(s string) bool {
		return portNumber.MatchString(s) || len(k8svalidation.IsValidPortName(s)) == 0
	},
}

// runtimeClassName accepts "" (no RuntimeClass) or a RuntimeClass name.
var runtimeClassName = stringFunc{
	summary: "Invalid RuntimeClass name",
	desc:    "must be \"\" (the node's default runtime) or a RuntimeClass name (a lower-case RFC 1123 subdomain)",
	ok: func(s string) bool {
		return s == "" || len(k8svalidation.IsDNS1123Subdomain(s)) == 0
	},
}

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

// stringFunc is a one-message string validator.
type stringFunc struct {
	summary, desc string
	ok            func(string) bool
}

func (v stringFunc) Description(context.Context) string { return v.desc }

func (v stringFunc) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v stringFunc) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || v.ok(req.ConfigValue.ValueString()) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, v.summary, fmt.Sprintf("%q %s.", req.ConfigValue.ValueString(), v.desc))
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
