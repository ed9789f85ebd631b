package podtemplate

import (
	"regexp"

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
)

// runtimeClassName accepts "" (no RuntimeClass) or a RuntimeClass name.
var runtimeClassName = validators.Valid("Invalid RuntimeClass name",
	"must be \"\" (the node's default runtime) or a RuntimeClass name (a lower-case RFC 1123 subdomain)",
	func(s string) bool { return s == "" || len(k8svalidation.IsDNS1123Subdomain(s)) == 0 })

// relPath is the shared rule for paths inside a volume.
var relPath = validators.RelativePath()
